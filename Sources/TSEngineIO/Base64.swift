/// Standard base64 (RFC 4648 §4, with padding) for binary packets in Engine.IO v4 polling
/// payloads ("b" + base64). Kept here so the codec stays off Foundation.
public enum Base64 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let reverse: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        var i = 0
        let n = bytes.count
        while i + 3 <= n {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)]); out.append(alphabet[Int(v & 63)])
            i += 3
        }
        let rem = n - i
        if rem == 1 {
            let v = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(0x3D); out.append(0x3D)
        } else if rem == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)]); out.append(0x3D)
        }
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded or unpadded base64; nil on any invalid character or length.
    public static func decode<C: Collection>(_ chars: C) -> [UInt8]? where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var acc: UInt32 = 0
        var bits = 0
        var padding = 0
        for c in chars {
            if c == 0x3D { padding += 1; continue }
            if padding > 0 { return nil }  // data after padding
            let v = reverse[Int(c)]
            if v == 0xFF { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        if padding > 2 || bits >= 6 { return nil }
        return out
    }
}
