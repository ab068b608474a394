import TSHTTP

/// Who may read `/metrics`. It tells anyone who can read it how busy the server is, how many
/// sockets and rooms there are and which APNs and database errors happen, so it follows the
/// inspector's protected mode (`LocalOnly`): this machine may always read it (a Prometheus or
/// node exporter beside the server); another scraper needs its address in `metrics.allowFrom`
/// (TCP peer, or the client a trusted proxy names) or the bearer token `metrics.token`.
public struct MetricsAccess: Sendable {
    public let allowFrom: AddressRanges
    public let token: String?
    public let trustedProxies: TrustedProxies

    public init(allowFrom: AddressRanges = .none, token: String? = nil, trustedProxies: TrustedProxies = .none) {
        self.allowFrom = allowFrom
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.trustedProxies = trustedProxies
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        /// 401: a bearer token was sent and it is not `metrics.token`.
        case wrongToken
        /// 403: not local, not in `metrics.allowFrom`, no token.
        case refused(LocalOnly.Decision)
    }

    func check(_ request: HTTPRequest) -> Decision {
        Self.decide(local: LocalOnly.decide(request, trustedProxies: trustedProxies),
                    client: trustedProxies.clientAddress(of: request), presentedToken: Authenticator.bearerToken(request.header("Authorization")),
                    allowFrom: allowFrom, token: token)
    }

    /// The rule as a pure function. `client`: the address the request is attributed to (the TCP
    /// peer, or the client a trusted proxy names).
    static func decide(local: LocalOnly.Decision, client: String, presentedToken: String?, allowFrom: AddressRanges, token: String?) -> Decision {
        // With `metrics.token` set, a presented token decides. Without it, an Authorization header
        // meant for something else (an app's bearer token from this machine) does not close /metrics
        // to an address that may read it; elsewhere it is still a wrong token.
        if let presentedToken, let token {
            return InspectorAccess.constantTimeEqual(presentedToken, token) ? .allowed : .wrongToken
        }
        if local == .local || allowFrom.contains(TrustedProxies.hostOnly(client)) { return .allowed }
        return presentedToken == nil ? .refused(local) : .wrongToken
    }

    static func refusedMessage(_ decision: LocalOnly.Decision) -> String {
        "/metrics answers only this machine by default, not \(decision.origin). To let a scraper in, list its address or network in "
            + "metrics.allowFrom (environment TOUCHSYNC_METRICS_ALLOW_FROM, e.g. [\"10.0.0.5\", \"10.1.0.0/16\"]) or set metrics.token "
            + "(TOUCHSYNC_METRICS_TOKEN) and send Authorization: Bearer <token>."
    }
}
