/// Server-generated identifiers: lowercase UUID strings, so clients can compare ids as plain strings.
public enum UUIDGenerator {
    /// A random (version 4, RFC 9562 §5.4) UUID from the secure RNG, lowercase,
    /// e.g. `"0f8fad5b-d9cb-469f-a165-70867728950e"`.
    public static func lowercaseV4() -> String {
        var b = SecureRandom.bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40   // version 4
        b[8] = (b[8] & 0x3f) | 0x80   // variant 10xx (RFC 9562 §4.1)
        let hex = Array(Hex.encode(b).utf8)
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (i, c) in hex.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append(UInt8(ascii: "-")) }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
