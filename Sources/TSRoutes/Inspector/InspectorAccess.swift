import TSHTTP

/// Who may use the live inspector (`/inspector`, `/inspector/api/*`).
///
/// - No admin token (local use, the default outside production): anyone who can reach the
///   port, but only through a request addressed to `localhost` or an IP literal. A page on some
///   other site cannot read the inspector cross-origin (no CORS headers), and checking the `Host`
///   header stops a DNS-rebinding page from making the inspector "same-origin" under its own name.
/// - Admin token (`inspector.adminToken`, required with `TOUCHSYNC_ENV=production`): every request
///   carries `Authorization: Bearer <token>`; the page also accepts `?token=<token>` so it can be
///   opened from a browser's address bar (its script then sends the header itself).
public struct InspectorAccess: Sendable {
    public let adminToken: String?

    public init(adminToken: String?) {
        self.adminToken = adminToken.flatMap { $0.isEmpty ? nil : $0 }
    }

    public var tokenRequired: Bool { adminToken != nil }

    enum Decision: Equatable {
        case allowed
        /// 401: the admin token is missing or wrong.
        case unauthorized
        /// 403: open mode, but the request names a host that is neither localhost nor an IP.
        case foreignHost(String)
    }

    func check(_ request: HTTPRequest, allowQueryToken: Bool) -> Decision {
        if let adminToken {
            var presented = Authenticator.bearerToken(request.header("Authorization"))
            if presented == nil && allowQueryToken { presented = request.queryItems["token"] }
            guard let presented, Self.constantTimeEqual(presented, adminToken) else { return .unauthorized }
            return .allowed
        }
        guard let host = request.header("Host") else { return .allowed }  // HTTP/1.0 without Host
        return Self.isLocalOrLiteral(host) ? .allowed : .foreignHost(host)
    }

    /// `localhost`, `*.localhost`, an IPv4 literal or a bracketed IPv6 literal, with or without a port.
    static func isLocalOrLiteral(_ hostHeader: String) -> Bool {
        var host = Substring(hostHeader.lowercased())
        if host.hasPrefix("[") { return host.contains("]") }  // IPv6 literal (RFC 3986 §3.2.2)
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) }
    }

    /// Compares without an early exit on the first differing byte (only the length leaks).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
