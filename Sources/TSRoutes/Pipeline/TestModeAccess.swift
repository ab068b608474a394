import TSHTTP

/// Who may use the test-mode routes (`/api/test/*`): they reset the database, load users with
/// their tokens, read every event payload (private rooms' contents included) and inject faults,
/// so the address a request comes from is never enough on its own.
///
/// - **No test-mode token** (`testModeToken` unset, the default): protected mode, as the
///   inspector's (`LocalOnly`): only requests whose TCP peer is loopback and that no proxy
///   forwarded for another client, addressed to `localhost` or an IP literal (a DNS-rebinding page
///   names its own host). A server in a container or a CI service container binds 0.0.0.0 and is
///   reached from another address: it needs the token.
/// - **Test-mode token** set: every request carries `X-TouchSync-Test: <token>`, from any address.
///
/// In both modes a request that changes something must carry `X-TouchSync-Test` (its value is the
/// token when one is set, anything non-empty otherwise): a web page on another origin cannot send
/// a custom header without a CORS preflight (Fetch standard, "CORS-safelisted request-header"),
/// which this server never grants, so a page open in a developer's browser cannot reset a local
/// test server with a "simple" `text/plain` POST. A request whose `Origin` is another site is
/// refused outright (`CrossSiteCheck`).
///
/// What an address check cannot see: a proxy on the same host that adds no forwarding header
/// makes every visitor look local. A test-mode server behind such a proxy needs the token.
public struct TestModeAccess: Sendable {
    public static let header = "X-TouchSync-Test"
    public let token: String?
    public let trustedProxies: TrustedProxies

    public init(token: String?, trustedProxies: TrustedProxies = .none) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.trustedProxies = trustedProxies
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        /// 401: a token is configured and the request did not present it.
        case wrongToken
        /// 403: protected mode and the request is not from this machine.
        case notLocal(LocalOnly.Decision)
        /// 403: protected mode and the `Host` is neither localhost nor an IP literal.
        case foreignHost(String)
        /// 403: a change without `X-TouchSync-Test`.
        case missingHeader
        /// 403: the `Origin` is another site.
        case crossSite(String)
    }

    func check(_ request: HTTPRequest) -> Decision {
        let local = token == nil ? LocalOnly.decide(request, trustedProxies: trustedProxies) : .local
        return Self.decide(token: token, presented: request.header(Self.header), changes: request.method != .GET && request.method != .HEAD,
                           local: local, host: request.header("Host"), origin: request.header("Origin"))
    }

    /// The whole rule as a pure function.
    static func decide(token: String?, presented: String?, changes: Bool, local: LocalOnly.Decision, host: String?, origin: String?) -> Decision {
        if let origin, !CrossSiteCheck.isSameSiteOrLocal(origin: origin, host: host) { return .crossSite(origin) }
        if let token {
            guard let presented, LocalOnly.constantTimeEqual(presented, token) else { return .wrongToken }
            return .allowed
        }
        guard local == .local else { return .notLocal(local) }
        if let host, !LocalOnly.isLocalOrLiteral(host) { return .foreignHost(host) }
        if changes && (presented ?? "").isEmpty { return .missingHeader }
        return .allowed
    }

    static func message(_ decision: Decision) -> String {
        switch decision {
        case .allowed: return ""
        case .wrongToken:
            return "Test mode has a token (testModeToken, environment TOUCHSYNC_TEST_MODE_TOKEN): send it as \(header): <token>. "
                + "TouchSyncTesting sends it when TOUCHSYNC_TEST_MODE_TOKEN is set in the test process's environment."
        case .notLocal(let where_):
            return "Test mode without a token answers only this machine (loopback), not \(where_.origin). "
                + "For a server in a container or on another host, set testModeToken (environment TOUCHSYNC_TEST_MODE_TOKEN) to a long random "
                + "secret and send it as \(header): <token> (TouchSyncTesting does when TOUCHSYNC_TEST_MODE_TOKEN is set)."
        case .foreignHost(let host):
            return "Test mode without a token answers only requests addressed to localhost or an IP address (Host \(host) refused, "
                + "DNS-rebinding protection); use http://127.0.0.1:<port>, or set testModeToken."
        case .missingHeader:
            return "Test-mode changes need the header \(header): 1 (any value; the token when testModeToken is set), "
                + "so that a web page cannot send them from a browser. TouchSyncTesting sends it."
        case .crossSite(let origin):
            return "Test mode refuses requests from another site (Origin \(origin))."
        }
    }

    /// Whether the check stands in front of `pattern`: every `/api/test/*` route, whoever
    /// registered it (`RequestPipeline`).
    static func guards(_ pattern: String) -> Bool { pattern == "/api/test" || pattern.hasPrefix("/api/test/") }
}

/// The `Origin` check of the routes a browser must not drive from another site (test mode, the
/// inspector's changes). A browser sends `Origin` on every cross-origin request and on same-origin
/// ones that change something (RFC 6454 §7, Fetch standard); a non-browser client sends none.
public enum CrossSiteCheck {
    /// True when `origin` names the same host and port as `host` (the page the server itself
    /// served), or a loopback/localhost origin. `null` (a sandboxed or file page) is foreign.
    public static func isSameSiteOrLocal(origin: String, host: String?) -> Bool {
        let lower = origin.lowercased()
        guard let schemeEnd = lower.range(of: "://") else { return false }
        let authority = String(lower[schemeEnd.upperBound...].prefix { $0 != "/" })
        if let host, authority == host.lowercased() { return true }
        var name = Substring(authority)
        if name.hasPrefix("[") {  // [v6]:port (RFC 3986 §3.2.2)
            name = name.dropFirst().prefix { $0 != "]" }
            return LocalOnly.isLoopback(String(name))
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        return name == "localhost" || name.hasSuffix(".localhost") || LocalOnly.isLoopback(String(name))
    }
}
