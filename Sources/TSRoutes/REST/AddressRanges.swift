/// A list of IP addresses and CIDR ranges, IPv4 and IPv6 (`metrics.allowFrom`): `10.0.0.0/8`,
/// `192.0.2.7`, `2001:db8::/32`, `::1`. Addresses are compared as 128-bit numbers, IPv4 ones as
/// IPv4-mapped IPv6 (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), so `::ffff:10.1.2.3` from a dual-stack
/// listener matches `10.0.0.0/8`.
public struct AddressRanges: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let base: IPAddress
        let prefix: Int  // of the 128 bits
    }

    let ranges: [Range]

    public static let none = AddressRanges(ranges: [])

    /// Throws on an entry that is not an address or `address/prefix`, so a typo cannot silently
    /// open (or close) the endpoint.
    public init(_ list: [String]) throws {
        var ranges: [Range] = []
        for raw in list {
            let item = raw.filter { $0 != " " && $0 != "\t" }
            var text = Substring(item)
            var prefix: Int? = nil
            if let slash = item.firstIndex(of: "/") {
                guard let p = Int(item[item.index(after: slash)...]) else { throw AddressRangesError(entry: raw) }
                prefix = p
                text = item[..<slash]
            }
            guard let address = IPAddress(text) else { throw AddressRangesError(entry: raw) }
            let width = text.contains(":") ? 128 : 32  // an IPv4 prefix counts the last 32 of the mapped 128 bits
            let p = prefix ?? width
            guard (0...width).contains(p) else { throw AddressRangesError(entry: raw) }
            ranges.append(Range(base: address, prefix: p + (128 - width)))
        }
        self.ranges = ranges
    }

    init(ranges: [Range]) { self.ranges = ranges }

    public var isEmpty: Bool { ranges.isEmpty }

    /// True when `address` (an IP without port, IPv6 with or without brackets) is in one of the ranges.
    public func contains(_ address: String) -> Bool {
        guard let a = IPAddress(Substring(address)) else { return false }
        return ranges.contains { a.matches($0.base, prefix: $0.prefix) }
    }
}

/// An `AddressRanges` entry that is neither an address nor `address/prefix`.
public struct AddressRangesError: Error, CustomStringConvertible, Sendable {
    public let entry: String
    public var description: String { "\"\(entry)\" is not an IP address or a CIDR range (a.b.c.d/n, x:y::/n)" }
}

/// An IPv4 or IPv6 address as 128 bits (IPv4 mapped into `::ffff:0:0/96`). Parses the textual
/// forms of RFC 4291 §2.2: `::` compression and a dotted IPv4 tail; brackets and a zone (`%eth0`) are dropped.
struct IPAddress: Sendable, Equatable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init?(_ text: Substring) {
        var s = text
        if s.hasPrefix("[") && s.hasSuffix("]") { s = s.dropFirst().dropLast() }
        if let zone = s.firstIndex(of: "%") { s = s[..<zone] }
        if let v4 = TrustedProxies.ipv4(s) {
            self.init(high: 0, low: 0xFFFF_0000_0000 | UInt64(v4))
            return
        }
        guard s.contains(":"), let groups = Self.groups(s) else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for (i, g) in groups.enumerated() {
            if i < 4 { high = high << 16 | UInt64(g) } else { low = low << 16 | UInt64(g) }
        }
        self.init(high: high, low: low)
    }

    /// The eight 16-bit groups of an IPv6 text, or nil.
    private static func groups(_ s: Substring) -> [UInt16]? {
        var halves = [String(s)]
        if let gap = s.firstRange(of: "::") {
            halves = [String(s[..<gap.lowerBound]), String(s[gap.upperBound...])]
            guard !halves[1].contains("::") else { return nil }
        }
        func parse(_ part: String, allowV4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, f) in fields.enumerated() {
                if allowV4Tail && i == fields.count - 1, f.contains("."), let v4 = TrustedProxies.ipv4(f) {
                    out.append(UInt16(v4 >> 16))
                    out.append(UInt16(v4 & 0xFFFF))
                } else {
                    guard (1...4).contains(f.count), let g = UInt16(f, radix: 16) else { return nil }
                    out.append(g)
                }
            }
            return out
        }
        if halves.count == 1 {
            guard let all = parse(halves[0], allowV4Tail: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = parse(halves[0], allowV4Tail: false), let tail = parse(halves[1], allowV4Tail: true),
              head.count + tail.count <= 7 else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    var isIPv4Mapped: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// 127.0.0.0/8 (also IPv4-mapped) or `::1` (RFC 6890: the loopback blocks).
    var isLoopback: Bool {
        if isIPv4Mapped { return (low >> 24) & 0xFF == 127 }
        return high == 0 && low == 1
    }

    func matches(_ base: IPAddress, prefix: Int) -> Bool {
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? ~0 : ~UInt64(0) << (64 - bits) }
        let mh = mask(prefix), ml = mask(prefix - 64)
        return high & mh == base.high & mh && low & ml == base.low & ml
    }
}
