import TSHTTP

/// The optional plain-HTTP port next to the HTTPS one (`tls.redirectPort`, docs/tls.md): every
/// request is answered `308 Permanent Redirect` (RFC 9110 §15.4.9: method and body are kept) to
/// the same target on `https://`, except `/health`, which load balancers and probes may keep
/// polling over plain HTTP.
struct HTTPSRedirectResponder: HTTPResponder {
    let httpsPort: @Sendable () -> Int
    let fallbackHost: String
    let health: any HTTPResponder

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        if request.path == "/health" { return await health.respond(to: request) }
        let location = Self.location(host: request.headers["host"], fallbackHost: fallbackHost, httpsPort: httpsPort(), target: request.target)
        var headers = HTTPHeaders()
        headers.add("Location", location)
        var r = HTTPResponse.text("This server speaks HTTPS: \(location)\n", status: 308, headers: headers)
        r.accessLogLevel = .debug
        return r
    }

    func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        request.path == "/health" ? health.respondImmediately(to: request) : nil
    }

    /// `https://<host of the Host header, or the listen address>[:port]<target>`.
    static func location(host: String?, fallbackHost: String, httpsPort: Int, target: String) -> String {
        var name = host.map(stripPort) ?? ""
        if name.isEmpty { name = fallbackHost == "0.0.0.0" ? "127.0.0.1" : fallbackHost }
        let port = httpsPort == 443 ? "" : ":\(httpsPort)"
        let path = target.hasPrefix("/") ? target : "/"
        return "https://\(name)\(port)\(path)"
    }

    /// "example.com:80" → "example.com", "[::1]:80" → "[::1]" (RFC 9110 §7.2 Host = uri-host [":" port]).
    static func stripPort(_ host: String) -> String {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return "" }
            return String(host[...close])
        }
        return String(host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}
