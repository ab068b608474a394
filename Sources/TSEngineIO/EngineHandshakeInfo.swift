/// Query, headers and peer address of the request that opened a session.
///
/// Kept for the session's whole life (Socket.IO exposes it as `socket.handshake`), so it is
/// stored packed: the query pairs and header fields as one byte buffer (`name 0 value 0` …),
/// one allocation instead of a dictionary, an array and a String per long name or value.
/// `query`, `headers` and `header(_:)` decode from it on access (handshake-time and
/// inspector reads, never per message).
public struct EngineHandshakeInfo: Sendable {
    /// Query pairs, then header fields, each string followed by a 0 byte (a NUL inside a
    /// query value or header cannot occur: percent-decoded NULs and header NULs are refused
    /// by the HTTP parser; if one did, decoding splits there, see `pack`).
    private var packed: [UInt8]
    /// Number of query pairs (they come first in `packed`).
    private var queryCount: Int32
    public var remoteAddress: String?

    public init(query: [String: String], headers: [(name: String, value: String)], remoteAddress: String?) {
        packed = []
        queryCount = Int32(query.count)
        self.remoteAddress = remoteAddress
        packed = Self.pack(query.map { ($0.key, $0.value) } + headers.map { ($0.name, $0.value) })
    }

    private static func pack(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(pairs.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 2 })
        for (k, v) in pairs {
            // A NUL would split the entry: drop it (not a valid query/header byte for the handshake).
            out.append(contentsOf: k.utf8.lazy.filter { $0 != 0 })
            out.append(0)
            out.append(contentsOf: v.utf8.lazy.filter { $0 != 0 })
            out.append(0)
        }
        return out
    }

    /// Calls `body` with each (name, value) pair as byte ranges, query pairs first; stops when it returns false.
    private func forEachPair(_ body: (_ isQuery: Bool, Range<Int>, Range<Int>) -> Bool) {
        var i = 0
        var n: Int32 = 0
        let b = packed
        while i < b.count {
            let k0 = i
            while i < b.count && b[i] != 0 { i += 1 }
            let k = k0..<i
            i += 1
            let v0 = i
            while i < b.count && b[i] != 0 { i += 1 }
            let v = v0..<min(i, b.count)
            i += 1
            if !body(n < queryCount, k, v) { return }
            n += 1
        }
    }

    private func string(_ r: Range<Int>) -> String { String(decoding: packed[r], as: UTF8.self) }

    public var query: [String: String] {
        get {
            var q: [String: String] = [:]
            forEachPair { isQuery, k, v in
                if isQuery { q[string(k)] = string(v) }
                return isQuery
            }
            return q
        }
        set { self = EngineHandshakeInfo(query: newValue, headers: headers, remoteAddress: remoteAddress) }
    }

    public var headers: [(name: String, value: String)] {
        get {
            var h: [(name: String, value: String)] = []
            forEachPair { isQuery, k, v in
                if !isQuery { h.append((name: string(k), value: string(v))) }
                return true
            }
            return h
        }
        set { self = EngineHandshakeInfo(query: query, headers: newValue, remoteAddress: remoteAddress) }
    }

    /// The value of the query parameter `name`: `query[name]`, without building the dictionary.
    public func queryValue(_ name: String) -> String? {
        let want = Array(name.utf8)
        var found: Range<Int>?
        forEachPair { isQuery, k, v in
            guard isQuery else { return false }
            if k.count == want.count, packed[k].elementsEqual(want) { found = v }
            return true
        }
        return found.map(string)
    }

    /// First header with this name (case-insensitive, ASCII as field names are, RFC 9110 §5.1).
    public func header(_ name: String) -> String? {
        let want = Array(name.utf8)
        var found: String?
        forEachPair { isQuery, k, v in
            guard !isQuery, k.count == want.count else { return true }
            var j = 0
            for i in k {
                var c = packed[i]
                if c >= 65 && c <= 90 { c += 32 }
                var w = want[j]
                if w >= 65 && w <= 90 { w += 32 }
                if c != w { return true }
                j += 1
            }
            found = string(v)
            return false
        }
        return found
    }
}
