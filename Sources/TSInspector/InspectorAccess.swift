import TSContract
import TSHTTP
import TSRoutes

/// Who may use the live inspector (`/inspector`, `/inspector/api/*`).
///
/// - No admin token (local use, the default outside production; demo mode too): protected mode.
///   Only requests whose TCP peer is a loopback address and that no proxy forwarded for another
///   client (`LocalOnly`), so `serve --host 0.0.0.0` without `TOUCHSYNC_ENV=production` does not
///   show users, sockets and events to the network; everyone else gets 403 with how to open it.
///   Those requests must also be addressed to `localhost` or an IP literal: a page on some other
///   site cannot read the inspector cross-origin (no CORS headers), and checking the `Host` header
///   stops a DNS-rebinding page from making the inspector "same-origin" under its own name.
/// - Admin token (`inspector.adminToken`, required with `TOUCHSYNC_ENV=production`): every request
///   carries `Authorization: Bearer <token>`, from any address; the page also accepts
///   `?token=<token>` so it can be opened from a browser's address bar (its script then sends the
///   header itself).
public struct InspectorAccess: Sendable {
    public let adminToken: String?
    /// Peers whose `X-Forwarded-For` names the client (`server.trustedProxies`).
    public let trustedProxies: TrustedProxies

    public init(adminToken: String?, trustedProxies: TrustedProxies = .none) {
        self.adminToken = adminToken.flatMap { $0.isEmpty ? nil : $0 }
        self.trustedProxies = trustedProxies
    }

    public var tokenRequired: Bool { adminToken != nil }

    enum Decision: Equatable {
        case allowed
        /// 401: the admin token is missing or wrong.
        case unauthorized
        /// 403: protected mode, and the request is not from this machine (`LocalOnly`).
        case notLocal(LocalOnly.Decision)
        /// 403: protected mode, but the request names a host that is neither localhost nor an IP.
        case foreignHost(String)
    }

    func check(_ request: HTTPRequest, allowQueryToken: Bool) -> Decision {
        var presented = BearerToken.parse(request.header("Authorization"))
        if presented == nil && allowQueryToken { presented = request.queryItems["token"] }
        let local = adminToken == nil ? LocalOnly.decide(request, trustedProxies: trustedProxies) : .local
        return Self.decide(adminToken: adminToken, presentedToken: presented, local: local, host: request.header("Host"))
    }

    /// The whole rule as a pure function: the configured token, the one the request presented,
    /// where the request came from (`LocalOnly.decide`) and its `Host` header.
    static func decide(adminToken: String?, presentedToken: String?, local: LocalOnly.Decision, host: String?) -> Decision {
        if let adminToken {
            guard let presentedToken, LocalOnly.constantTimeEqual(presentedToken, adminToken) else { return .unauthorized }
            return .allowed
        }
        guard local == .local else { return .notLocal(local) }
        guard let host else { return .allowed }  // HTTP/1.0 without Host
        return LocalOnly.isLocalOrLiteral(host) ? .allowed : .foreignHost(host)
    }

    /// The 403 message of protected mode: why, and exactly how to open the inspector to others.
    static func notLocalMessage(_ decision: LocalOnly.Decision) -> String {
        "The inspector has no admin token, so it answers only requests from this machine (loopback), not \(decision.origin). "
            + "To use it from elsewhere, set inspector.adminToken (environment TOUCHSYNC_INSPECTOR_ADMIN_TOKEN) to a long random secret "
            + "and send Authorization: Bearer <token>, or open /inspector?token=<token>."
    }
}
