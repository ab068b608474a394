import TSContract
import TSHTTP

/// Who may read `/metrics`. It tells anyone who can read it how busy the server is, how many
/// sockets and rooms there are and which APNs and database errors happen:
/// - a scraper whose address is in `metrics.allowFrom` (TCP peer, or the client a trusted proxy
///   names), or that sends the bearer token `metrics.token`, from anywhere;
/// - outside production, also this machine (the inspector's protected mode, `LocalOnly`: a
///   Prometheus or node exporter beside the server), for requests addressed to localhost or an IP
///   literal (a DNS-rebinding page names its own host);
/// - with `TOUCHSYNC_ENV=production`, nobody else, not even loopback: a reverse proxy on the same
///   host connects from loopback, and one that adds no forwarding header makes every visitor look
///   local, which no address check can see.
public struct MetricsAccess: Sendable {
    public let allowFrom: AddressRanges
    public let token: String?
    public let trustedProxies: TrustedProxies
    /// `TOUCHSYNC_ENV=production`: loopback is not enough.
    public let production: Bool

    public init(allowFrom: AddressRanges = .none, token: String? = nil, trustedProxies: TrustedProxies = .none, production: Bool = false) {
        self.allowFrom = allowFrom
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.trustedProxies = trustedProxies
        self.production = production
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        /// 401: a bearer token was sent and it is not `metrics.token`.
        case wrongToken
        /// 403: not local, not in `metrics.allowFrom`, no token.
        case refused(LocalOnly.Decision)
        /// 403: production, and neither `metrics.allowFrom` nor `metrics.token` let the request in.
        case needsCredential
        /// 403: local, but addressed to a name that is neither localhost nor an IP literal.
        case foreignHost(String)
    }

    func check(_ request: HTTPRequest) -> Decision {
        Self.decide(local: LocalOnly.decide(request, trustedProxies: trustedProxies),
                    client: trustedProxies.clientAddress(of: request), presentedToken: BearerToken.parse(request.header("Authorization")),
                    allowFrom: allowFrom, token: token, production: production, host: request.header("Host"))
    }

    /// The rule as a pure function. `client`: the address the request is attributed to (the TCP
    /// peer, or the client a trusted proxy names).
    static func decide(local: LocalOnly.Decision, client: String, presentedToken: String?, allowFrom: AddressRanges, token: String?,
                       production: Bool = false, host: String? = nil) -> Decision {
        // With `metrics.token` set, a presented token decides. Without it, an Authorization header
        // meant for something else (an app's bearer token from this machine) does not close /metrics
        // to an address that may read it; elsewhere it is still a wrong token.
        if let presentedToken, let token {
            return LocalOnly.constantTimeEqual(presentedToken, token) ? .allowed : .wrongToken
        }
        if allowFrom.contains(TrustedProxies.hostOnly(client)) { return .allowed }
        if local == .local {
            if production { return presentedToken == nil ? .needsCredential : .wrongToken }
            if let host, !LocalOnly.isLocalOrLiteral(host) { return .foreignHost(host) }
            return .allowed
        }
        return presentedToken == nil ? .refused(local) : .wrongToken
    }

    static func refusedMessage(_ decision: Decision) -> String {
        switch decision {
        case .refused(let origin):
            return "/metrics answers only this machine by default, not \(origin.origin). To let a scraper in, list its address or network in "
                + "metrics.allowFrom (environment TOUCHSYNC_METRICS_ALLOW_FROM, e.g. [\"10.0.0.5\", \"10.1.0.0/16\"]) or set metrics.token "
                + "(TOUCHSYNC_METRICS_TOKEN) and send Authorization: Bearer <token>."
        case .needsCredential:
            return "With TOUCHSYNC_ENV=production /metrics needs metrics.token (TOUCHSYNC_METRICS_TOKEN, sent as Authorization: Bearer <token>) "
                + "or the scraper's address in metrics.allowFrom (TOUCHSYNC_METRICS_ALLOW_FROM), even from this machine: a reverse proxy on "
                + "this host connects from loopback too."
        case .foreignHost(let host):
            return "/metrics without metrics.token answers this machine only for requests addressed to localhost or an IP address "
                + "(Host \(host) refused, DNS-rebinding protection)."
        case .allowed, .wrongToken:
            return ""
        }
    }
}
