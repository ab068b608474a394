import CCrypto

/// Cryptographically secure random bytes from the system CSPRNG (libcrypto's `RAND_bytes` on Linux,
/// `CCRandomGenerateBytes` on Darwin; see the CCrypto shim).
public enum SecureRandom {
    /// `n` random bytes. A CSPRNG failure is unrecoverable (tokens and salts would be
    /// predictable), so it traps rather than returning weak bytes.
    public static func bytes(_ n: Int) -> [UInt8] {
        precondition(n >= 0, "negative byte count")
        if n == 0 { return [] }
        var out = [UInt8](repeating: 0, count: n)
        let ok = out.withUnsafeMutableBufferPointer { ts_random_bytes($0.baseAddress, n) }
        precondition(ok == 1, "the system CSPRNG is unavailable")
        return out
    }

    /// Lowercase hex of `bytes` random bytes (the string has `2 * bytes` characters).
    public static func hexString(bytes: Int) -> String { Hex.encode(self.bytes(bytes)) }
}

/// Lowercase hexadecimal encoding.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes upper- or lowercase hex; nil on odd length or a non-hex character.
    public static func decode(_ string: String) -> [UInt8]? {
        let chars = Array(string.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
