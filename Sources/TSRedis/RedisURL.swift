/// `redis://[[username]:password@]host[:port][/db]` (the IANA `redis` URI scheme,
/// https://www.iana.org/assignments/uri-schemes/prov/redis). Pub/sub ignores the database number
/// (channels are server-wide), so `/db` is accepted and unused. `rediss://` (TLS) is refused
/// with an explanation: this client speaks plain TCP.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let username: String?
    public let password: String?

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(host: String, port: Int = 6379, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    public init(parsing text: String) throws {
        let bad = { (why: String) in Invalid(description: "realtime.redisUrl \"\(RedisURL.redacted(text))\": \(why); expected redis://[[user]:password@]host[:port]") }
        if text.hasPrefix("rediss://") { throw bad("TLS (rediss://) is not supported by the built-in client; reach Redis over a private network or a local TLS tunnel") }
        guard text.hasPrefix("redis://") else { throw bad("the scheme must be redis://") }
        var rest = Substring(text.dropFirst("redis://".count))
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<slash] }
        var user: String?
        var pass: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = info.firstIndex(of: ":") {
                let u = String(info[..<colon])
                user = u.isEmpty ? nil : try Self.percentDecoded(u, bad)
                pass = try Self.percentDecoded(String(info[info.index(after: colon)...]), bad)
            } else if !info.isEmpty {
                // redis://password@host is how several clients read a lone userinfo.
                pass = try Self.percentDecoded(String(info), bad)
            }
        }
        var host: Substring
        var port = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw bad("unclosed [ in the host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw bad("junk after the host") }
                rest = rest.dropFirst()
                guard let p = Int(rest), (1...65535).contains(p) else { throw bad("bad port") }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { throw bad("bad port") }
            port = p
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw bad("no host") }
        self.host = String(host)
        self.port = port
        username = user
        self.password = pass
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        let auth = password == nil ? "" : "\(username ?? ""):***@"
        return "redis://\(auth)\(h):\(port)"
    }

    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@"), let start = text.range(of: "://")?.upperBound, start < at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }

    private static func percentDecoded(_ s: String, _ bad: (String) -> Invalid) throws -> String {
        var out: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { throw bad("bad %-escape") }
                out.append(v)
                it = it.dropFirst(2)
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
