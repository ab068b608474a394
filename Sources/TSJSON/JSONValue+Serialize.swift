/// Serialization to compact UTF-8 JSON (RFC 8259 §2–§7). Non-finite doubles, which JSON cannot
/// represent, are written as `null`.
extension JSONValue {
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        serialize(into: &out)
        return out
    }

    public func serializedString() -> String { String(decoding: serialized(), as: UTF8.self) }

    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): JSONValue.writeInt(i, into: &out)
        case .double(let d):
            if !d.isFinite {
                out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            } else if d.rounded() == d && abs(d) < 1e15 {
                JSONValue.writeInt(Int64(d), into: &out)
            } else {
                out.append(contentsOf: d.description.utf8)
            }
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            var first = true
            for v in a {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                v.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            for p in o.pairs {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(p.key, into: &out)
                out.append(UInt8(ascii: ":"))
                p.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeInt(_ value: Int64, into out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var v = value.magnitude
        var buf: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &buf) { p in
            while v > 0 {
                p[19 - n] = UInt8(truncatingIfNeeded: v % 10) + 0x30
                v /= 10
                n += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[(20 - n)...]))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a JSON string literal; escapes `"`, `\` and control characters (RFC 8259 §7).
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeEscaped($0, into: &out) }
    }

    /// Writes a JSON string literal from UTF-8 bytes as a database hands them over (no `String`):
    /// the same bytes as `writeString(String(decoding: bytes, as: UTF8.self))`. Bytes that are all
    /// ASCII (the common case) are escaped in place; anything else goes through
    /// `String(decoding:)`, so ill-formed UTF-8 is repaired exactly as the `String` path repairs it.
    public static func writeString(utf8 bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        let b = bytes.bindMemory(to: UInt8.self)
        var ascii = true
        for byte in b where byte >= 0x80 { ascii = false; break }
        if ascii {
            writeEscaped(b, into: &out)
        } else {
            writeString(String(decoding: b, as: UTF8.self), into: &out)
        }
    }

    /// The quoted, escaped literal of well-formed UTF-8 `bytes` (RFC 8259 §7): `"`, `\` and
    /// control characters escaped, everything else as it is.
    static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C { i += 1; continue }
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            switch b {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            default:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            }
            i += 1
            runStart = i
        }
        if runStart < n { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serializedString() }
}
