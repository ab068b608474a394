/// Route parameters captured from a path pattern (`:name` segments, `*` wildcard).
public struct RouteParameters: Sendable, Equatable {
    public private(set) var pairs: [(name: String, value: String)] = []
    public init() {}
    public init(_ pairs: [(String, String)]) { self.pairs = pairs.map { (name: $0.0, value: $0.1) } }
    /// The (percent-decoded) value of `name`, or nil.
    public subscript(_ name: String) -> String? {
        for p in pairs where p.name == name { return p.value }
        return nil
    }
    public mutating func set(_ name: String, _ value: String) { pairs.append((name, value)) }
    public var isEmpty: Bool { pairs.isEmpty }
    public static func == (a: RouteParameters, b: RouteParameters) -> Bool {
        a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A complete HTTP request as handed to handlers.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as received.
    public var target: String
    /// The path part of the target (no query), not percent-decoded. For absolute-form targets the
    /// scheme and authority are removed (RFC 9112 §3.2.2).
    public var path: String
    /// The raw query (after `?`, before `#`), or nil.
    public var query: String?
    /// Query parameters, percent-decoded (`+` is a space); the first occurrence of a name wins.
    public var queryItems: [String: String]
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var remoteAddress: String
    /// The X-Request-Id echoed on the response.
    public var requestID: String
    public var connectionID: UInt64
    /// Filled in by the router.
    public var parameters: RouteParameters
    /// The matched route pattern (e.g. `/api/rooms/:roomId`), filled in by the router.
    public var routePattern: String?
    /// Whether the connection may be kept open after this request.
    public var keepAlive: Bool
    /// Deepest nesting `jsonBody()` accepts (`server.maxJsonDepth`); set by the connection handler.
    public var maxJSONDepth: Int = HTTPRequest.defaultMaxJSONDepth
    public static let defaultMaxJSONDepth = 64

    public init(method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = [], remoteAddress: String = "", requestID: String = "", connectionID: UInt64 = 0,
                keepAlive: Bool = true) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.requestID = requestID
        self.connectionID = connectionID
        self.parameters = RouteParameters()
        self.routePattern = nil
        self.keepAlive = keepAlive
        let (p, q) = HTTPRequest.splitTarget(target)
        self.path = p
        self.query = q
        self.queryItems = q.map(HTTPRequest.parseQuery) ?? [:]
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers[name] }

    /// Splits a request-target into path and query (fragment dropped; absolute-form's scheme and
    /// authority removed, RFC 9112 §3.2.2). ASCII targets (every target the parser accepts, RFC
    /// 9112 §3.2 / RFC 3986 §2) take one linear byte scan and, for the usual origin-form target
    /// without a query, return `target` itself (no copy); anything else takes the Character-based
    /// path, which defines the behaviour both must agree on (HTTPRequestTargetTests).
    static func splitTarget(_ target: String) -> (String, String?) {
        if let split = target.utf8.withContiguousStorageIfAvailable({ splitASCIITarget($0, target) }), let split {
            return split
        }
        return splitTargetCharacters(target)
    }

    /// The byte scan of `splitTarget`; nil when `bytes` (the UTF-8 of `target`) is not all ASCII.
    static func splitASCIITarget(_ bytes: UnsafeBufferPointer<UInt8>, _ target: String) -> (String, String?)? {
        let n = bytes.count
        var end = n  // the first "#" (the fragment is dropped)
        var i = 0
        while i < n {
            let b = bytes[i]
            if b >= 0x80 { return nil }
            if b == UInt8(ascii: "#"), end == n { end = i }
            i += 1
        }
        var start = 0
        var slashBeforeQuery = false  // absolute-form "scheme://host?q": the path is "/"
        if end == 0 || bytes[0] != UInt8(ascii: "/") {
            var colon = 0
            while colon < end, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
            if colon + 2 < end, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") {
                var s = colon + 3
                while s < end, bytes[s] != UInt8(ascii: "/"), bytes[s] != UInt8(ascii: "?") { s += 1 }
                if s == end { return ("/", nil) }
                start = s
                slashBeforeQuery = bytes[s] == UInt8(ascii: "?")
            }
        }
        var q = start
        while q < end, bytes[q] != UInt8(ascii: "?") { q += 1 }
        func string(_ from: Int, _ to: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
        }
        if q == end {
            return (start == 0 && end == n ? target : string(start, end), nil)
        }
        let path = slashBeforeQuery ? "/" : string(start, q)
        return (path, string(q + 1, end))
    }

    /// The Character-based split (the reference behaviour; used for non-ASCII targets).
    static func splitTargetCharacters(_ target: String) -> (String, String?) {
        var t = Substring(target)
        if let hash = t.firstIndex(of: "#") { t = t[..<hash] }
        // absolute-form: drop "scheme://authority".
        if t.first != "/", let colon = t.firstIndex(of: ":"),
           t[colon...].hasPrefix("://") {
            let afterAuthority = t[t.index(colon, offsetBy: 3)...]
            if let slash = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                t = afterAuthority[slash...]
            } else {
                t = "/"
            }
            if t.first == "?" { t = "/" + t }
        }
        if let q = t.firstIndex(of: "?") {
            return (String(t[..<q]), String(t[t.index(after: q)...]))
        }
        return (String(t), nil)
    }

    static func parseQuery(_ query: String) -> [String: String] {
        var items: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring, value: Substring
            if let eq = pair.firstIndex(of: "=") {
                name = pair[..<eq]
                value = pair[pair.index(after: eq)...]
            } else {
                name = pair
                value = ""
            }
            let key = percentDecode(name, plusAsSpace: true)
            if items[key] == nil { items[key] = percentDecode(value, plusAsSpace: true) }
        }
        return items
    }
}

/// Percent-decodes (RFC 3986 §2.1). Invalid escapes are kept literally; invalid UTF-8 is repaired.
func percentDecode<S: StringProtocol>(_ s: S, plusAsSpace: Bool) -> String {
    // Most values (route parameters: ids) have nothing to decode: checked on the view, no copy.
    if !s.utf8.contains(0x25) && !(plusAsSpace && s.utf8.contains(0x2B)) { return String(s) }
    let utf8 = Array(s.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count)
    var i = 0
    while i < utf8.count {
        let c = utf8[i]
        if c == 0x25, i + 2 < utf8.count, let h = HTTPParser.hexValue(utf8[i + 1]), let l = HTTPParser.hexValue(utf8[i + 2]) {
            out.append(UInt8(h << 4 | l))
            i += 3
        } else if c == 0x2B && plusAsSpace {
            out.append(0x20)
            i += 1
        } else {
            out.append(c)
            i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
