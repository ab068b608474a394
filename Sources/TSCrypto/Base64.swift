/// Base64 (RFC 4648 §4): standard alphabet, `=` padding. Also the encoding of binary packets
/// in Engine.IO v4 polling payloads (`b` + base64).
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.standard, pad: true)
    }

    /// Appends the encoding of `bytes` to `out` (no intermediate String).
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        Base64Codec.encode(bytes, alphabet: Base64Codec.standard, pad: true, into: &out)
    }

    public static func encode(_ string: String) -> String { encode(Array(string.utf8)) }

    /// Strict decoding: padding required (length a multiple of 4), no whitespace, no
    /// characters outside the alphabet, unused trailing bits must be zero (RFC 4648 §3.5).
    public static func decode(_ string: String) -> [UInt8]? {
        Base64Codec.decode(Array(string.utf8), alphabet: .standard, padding: .required)
    }

    /// `decode(_:)` over ASCII bytes (e.g. a slice of a request body).
    public static func decode<C: BidirectionalCollection>(bytes: C) -> [UInt8]? where C.Element == UInt8 {
        Base64Codec.decode(bytes, alphabet: .standard, padding: .required)
    }
}

/// Base64url (RFC 4648 §5): `-` and `_` instead of `+` and `/`, no padding (as JWS, RFC 7515 §2).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.url, pad: false)
    }

    public static func encode(_ string: String) -> String { encode(Array(string.utf8)) }

    /// Strict decoding: no `=` padding, alphabet `A–Z a–z 0–9 - _` only, canonical trailing bits.
    public static func decode(_ string: String) -> [UInt8]? {
        Base64Codec.decode(Array(string.utf8), alphabet: .url, padding: .forbidden)
    }

    public static func decode<S: Sequence>(bytes: S) -> [UInt8]? where S.Element == UInt8 {
        Base64Codec.decode(Array(bytes), alphabet: .url, padding: .forbidden)
    }

    /// `decode(bytes:)` over bytes in place (a token's segment), without copying them first.
    public static func decode(bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        Base64Codec.decode(bytes, alphabet: .url, padding: .forbidden)
    }
}

enum Base64Codec {
    static let standard: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let url: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    enum Alphabet { case standard, url }
    enum Padding { case required, forbidden }

    static func encode(_ bytes: [UInt8], alphabet table: [UInt8], pad: Bool) -> String {
        var out = [UInt8]()
        encode(bytes, alphabet: table, pad: pad, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func encode(_ bytes: [UInt8], alphabet table: [UInt8], pad: Bool, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(table[Int(n >> 18 & 63)])
            out.append(table[Int(n >> 12 & 63)])
            out.append(table[Int(n >> 6 & 63)])
            out.append(table[Int(n & 63)])
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out.append(table[Int(n >> 18 & 63)])
            out.append(table[Int(n >> 12 & 63)])
            if pad { out.append(UInt8(ascii: "=")); out.append(UInt8(ascii: "=")) }
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(table[Int(n >> 18 & 63)])
            out.append(table[Int(n >> 12 & 63)])
            out.append(table[Int(n >> 6 & 63)])
            if pad { out.append(UInt8(ascii: "=")) }
        }
    }

    @inline(__always)
    static func value(_ c: UInt8, _ alphabet: Alphabet) -> UInt32? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(c - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+") where alphabet == .standard: return 62
        case UInt8(ascii: "/") where alphabet == .standard: return 63
        case UInt8(ascii: "-") where alphabet == .url: return 62
        case UInt8(ascii: "_") where alphabet == .url: return 63
        default: return nil
        }
    }

    static func decode<C: BidirectionalCollection>(_ input: C, alphabet: Alphabet, padding: Padding) -> [UInt8]? where C.Element == UInt8 {
        var chars = input[...]
        switch padding {
        case .required:
            guard chars.count % 4 == 0 else { return nil }
            if chars.last == UInt8(ascii: "=") { chars = chars.dropLast() }
            if chars.last == UInt8(ascii: "=") { chars = chars.dropLast() }
        case .forbidden:
            break
        }
        // A single leftover character cannot encode a whole byte.
        guard chars.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in chars {
            guard let v = value(c, alphabet) else { return nil }  // also rejects interior '='
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
                acc &= (1 << UInt32(bits)) - 1
            }
        }
        // RFC 4648 §3.5: the pad bits of the last character must be zero (canonical encoding).
        guard acc == 0 else { return nil }
        return out
    }
}
