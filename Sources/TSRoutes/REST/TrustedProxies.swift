import TSHTTP

/// Which peers may tell us the client's address (`server.trustedProxies`), and the address a
/// request is attributed to. Behind nginx every connection comes from the proxy, so without this the
/// login throttle would count every user's failures under the proxy's address. Only a peer in the
/// list is believed: anyone else's `X-Forwarded-For` is ignored (it is trivially forged).
///
/// The client is the right-most `X-Forwarded-For` entry that is not itself a trusted proxy
/// (the convention of nginx's `realip` module with `real_ip_recursive on`): each proxy appends the
/// address it received the request from, so the entries right of the client are ours and the ones
/// left of it are whatever the client claimed.
public struct TrustedProxies: Sendable, Equatable {
    enum Entry: Sendable, Equatable {
        /// An IPv4 network: address and prefix length (a bare address is /32).
        case ipv4(UInt32, prefix: Int)
        /// Any other address (IPv6), compared as written, lower-cased, without brackets.
        case exact(String)
    }

    let entries: [Entry]

    public static let none = TrustedProxies(entries: [])

    /// Parses `["127.0.0.1", "10.0.0.0/8", "::1"]`. Throws on an entry that is neither an IPv4
    /// address or network nor something that looks like an IPv6 address, so a typo cannot
    /// silently trust nobody (or everybody).
    public init(_ list: [String]) throws {
        var entries: [Entry] = []
        for raw in list {
            let item = raw.trimmingSpaces
            if let slash = item.firstIndex(of: "/") {
                guard let base = Self.ipv4(item[..<slash]), let prefix = Int(item[item.index(after: slash)...]),
                      (0...32).contains(prefix) else { throw TrustedProxiesError(entry: raw) }
                entries.append(.ipv4(base, prefix: prefix))
            } else if let v4 = Self.ipv4(Substring(item)) {
                entries.append(.ipv4(v4, prefix: 32))
            } else if item.contains(":"), item.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "[" || $0 == "]" }) {
                entries.append(.exact(Self.normalized(item)))
            } else {
                throw TrustedProxiesError(entry: raw)
            }
        }
        self.entries = entries
    }

    init(entries: [Entry]) { self.entries = entries }

    public var isEmpty: Bool { entries.isEmpty }

    /// True when `address` (an IP without port) is a trusted proxy.
    public func contains(_ address: String) -> Bool {
        let v4 = Self.ipv4(Substring(address))
        let normalized = v4 == nil ? Self.normalized(address) : ""
        for entry in entries {
            switch entry {
            case .ipv4(let base, let prefix):
                guard let v4 else { continue }
                let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
                if v4 & mask == base & mask { return true }
            case .exact(let s):
                if v4 == nil && s == normalized { return true }
            }
        }
        return false
    }

    /// The address `request` is attributed to: its peer's IP, or, when the peer is a trusted proxy,
    /// the right-most untrusted `X-Forwarded-For` entry (the left-most when every entry is trusted).
    public func clientAddress(of request: HTTPRequest) -> String {
        let peer = Self.hostOnly(request.remoteAddress)
        guard let header = request.header("X-Forwarded-For") else { return peer }
        return clientAddress(peer: peer, forwardedFor: header)
    }

    /// The same for a peer IP (without port) and its `X-Forwarded-For` header.
    public func clientAddress(peer: String, forwardedFor header: String) -> String {
        guard !entries.isEmpty, contains(peer) else { return peer }
        let hops = header.split(separator: ",").map { Self.hostOnly(String($0).trimmingSpaces) }.filter { !$0.isEmpty }
        guard !hops.isEmpty else { return peer }
        for hop in hops.reversed() where !contains(hop) { return hop }
        return hops[0]
    }

    /// The IP without its port (`127.0.0.1:5123` → `127.0.0.1`; `[::1]:5123` → `[::1]`; a bare IPv6 stays).
    static func hostOnly(_ remote: String) -> String {
        guard let colon = remote.lastIndex(of: ":"), !remote.hasSuffix("]") else { return remote }
        let host = remote[..<colon]
        return host.contains(":") && !host.hasPrefix("[") ? remote : String(host)
    }

    static func normalized(_ s: String) -> String {
        var t = s.lowercased()
        if t.hasPrefix("[") && t.hasSuffix("]") { t = String(t.dropFirst().dropLast()) }
        return t
    }

    /// Dotted-quad IPv4 (four decimal octets, no leading `+`, each ≤ 255).
    static func ipv4(_ s: Substring) -> UInt32? {
        var value: UInt32 = 0
        var octets = 0
        for part in s.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let octet = UInt32(part), octet <= 255 else { return nil }
            value = value << 8 | octet
            octets += 1
        }
        return octets == 4 ? value : nil
    }
}

/// A `server.trustedProxies` entry that is neither an IPv4 address/network nor an IPv6 address.
public struct TrustedProxiesError: Error, CustomStringConvertible, Sendable {
    public let entry: String
    public var description: String {
        "server.trustedProxies: \"\(entry)\" is not an IP address or an IPv4 network (a.b.c.d/n)"
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
