/// `Host` field validation (RFC 9112 §3.2, RFC 9110 §7.2, RFC 3986 §3.2.2–§3.2.3).
///
///     Host       = uri-host [ ":" port ]
///     uri-host   = IP-literal / IPv4address / reg-name
///     IP-literal = "[" ( IPv6address / IPvFuture ) "]"
///     IPvFuture  = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
///     reg-name   = *( unreserved / pct-encoded / sub-delims )
///     port       = *DIGIT
///
/// RFC 9112 §3.2: a server MUST respond with 400 to a request whose Host field value is invalid.
/// An IPv4address is also a reg-name, so it needs no rule of its own. The port is further limited to
/// 0…65535 (RFC 793 port numbers), and an empty value is allowed (RFC 9110 §7.2: a target without an
/// authority is sent with an empty Host).
extension HTTPParser {
    public static func isValidHost<S: StringProtocol>(_ value: S) -> Bool {
        isValidHost(Array(value.utf8))
    }

    public static func isValidHost(_ b: [UInt8]) -> Bool {
        var hostEnd = b.count
        var i = 0
        if let first = b.first, first == UInt8(ascii: "[") {
            guard let close = b.firstIndex(of: UInt8(ascii: "]")) else { return false }
            guard isValidIPLiteral(b[1..<close]) else { return false }
            i = close + 1
            hostEnd = close + 1
            if i < b.count && b[i] != UInt8(ascii: ":") { return false }
        } else {
            while i < b.count && b[i] != UInt8(ascii: ":") { i += 1 }
            hostEnd = i
            guard isValidRegName(b[0..<hostEnd]) else { return false }
        }
        guard hostEnd < b.count else { return true }
        // ":" port — at most 5 digits and ≤ 65535; an empty port is allowed by RFC 3986 §3.2.3.
        let port = b[(hostEnd + 1)...]
        if port.count > 5 { return false }
        var n = 0
        for c in port {
            guard isDigit(c) else { return false }
            n = n * 10 + Int(c - 0x30)
        }
        return n <= 65_535
    }

    /// unreserved (RFC 3986 §2.3) and sub-delims (§2.2).
    @inline(__always) static func isUnreservedOrSubDelim(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="):
            return true
        default: return false
        }
    }

    /// reg-name = *( unreserved / pct-encoded / sub-delims ) (RFC 3986 §3.2.2).
    static func isValidRegName(_ b: ArraySlice<UInt8>) -> Bool {
        var i = b.startIndex
        while i < b.endIndex {
            let c = b[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < b.endIndex, hexValue(b[i + 1]) != nil, hexValue(b[i + 2]) != nil else { return false }
                i += 3
                continue
            }
            guard isUnreservedOrSubDelim(c) else { return false }
            i += 1
        }
        return true
    }

    /// The inside of an IP-literal: IPv6address or IPvFuture (RFC 3986 §3.2.2).
    static func isValidIPLiteral(_ b: ArraySlice<UInt8>) -> Bool {
        guard let first = b.first else { return false }
        if first == UInt8(ascii: "v") || first == UInt8(ascii: "V") {
            // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
            var i = b.startIndex + 1
            let hexStart = i
            while i < b.endIndex, hexValue(b[i]) != nil { i += 1 }
            guard i > hexStart, i < b.endIndex, b[i] == UInt8(ascii: ".") else { return false }
            i += 1
            guard i < b.endIndex else { return false }
            while i < b.endIndex {
                guard isUnreservedOrSubDelim(b[i]) || b[i] == UInt8(ascii: ":") else { return false }
                i += 1
            }
            return true
        }
        return isValidIPv6(b)
    }

    /// IPv6address (RFC 3986 §3.2.2, RFC 4291 §2.2): eight 16-bit groups of 1–4 hex digits, one
    /// "::" standing for one or more zero groups, and optionally an IPv4address as the last 32 bits.
    static func isValidIPv6(_ b: ArraySlice<UInt8>) -> Bool {
        guard b.count >= 2 else { return false }
        var groups = 0
        var sawDoubleColon = false
        var i = b.startIndex
        let colon = UInt8(ascii: ":")
        if b[i] == colon {
            // A leading colon only as part of "::".
            guard b[i + 1] == colon else { return false }
            sawDoubleColon = true
            i += 2
            if i == b.endIndex { return true }  // "::"
        }
        while i < b.endIndex {
            // One group: hex digits, or a trailing IPv4address.
            let start = i
            while i < b.endIndex, hexValue(b[i]) != nil { i += 1 }
            if i < b.endIndex, b[i] == UInt8(ascii: ".") {
                // IPv4 tail: must run to the end, and takes two groups.
                guard isValidIPv4(b[start..<b.endIndex]) else { return false }
                groups += 2
                i = b.endIndex
                break
            }
            let digits = i - start
            guard digits >= 1, digits <= 4 else { return false }
            groups += 1
            if i == b.endIndex { break }
            guard b[i] == colon else { return false }
            i += 1
            if i < b.endIndex, b[i] == colon {
                if sawDoubleColon { return false }
                sawDoubleColon = true
                i += 1
                if i == b.endIndex { break }  // trailing "::"
            } else if i == b.endIndex {
                return false  // a single trailing colon
            }
        }
        return sawDoubleColon ? groups <= 7 : groups == 8
    }

    /// IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet (RFC 3986 §3.2.2): no
    /// leading zeros, each 0…255.
    static func isValidIPv4(_ b: ArraySlice<UInt8>) -> Bool {
        var octets = 0
        var i = b.startIndex
        while true {
            let start = i
            var v = 0
            while i < b.endIndex, isDigit(b[i]), i - start < 3 {
                v = v * 10 + Int(b[i] - 0x30)
                i += 1
            }
            let digits = i - start
            guard digits >= 1, v <= 255, !(digits > 1 && b[start] == UInt8(ascii: "0")) else { return false }
            octets += 1
            if i == b.endIndex { return octets == 4 }
            guard b[i] == UInt8(ascii: "."), octets < 4 else { return false }
            i += 1
        }
    }
}
