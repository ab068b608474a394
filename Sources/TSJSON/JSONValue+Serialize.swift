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

    static func writeInt(_ value: Int64, into out: inout [UInt8]) { writeInt(value, to: &out) }

    static func writeInt<O: JSONByteOutput>(_ value: Int64, to out: inout O) {
        // One digit (most counts a response carries): no digit loop.
        if value >= 0 && value < 10 { out.appendByte(UInt8(truncatingIfNeeded: value) &+ 0x30); return }
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
            if value < 0 { out.appendByte(UInt8(ascii: "-")) }
            out.appendBytes(UnsafeBufferPointer(rebasing: p.bindMemory(to: UInt8.self)[(20 - n)...]))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a JSON string literal; escapes `"`, `\` and control characters (RFC 8259 §7).
    public static func writeString(_ s: String, into out: inout [UInt8]) { writeString(s, to: &out) }

    static func writeString<O: JSONByteOutput>(_ s: String, to out: inout O) {
        var s = s
        s.withUTF8 { writeEscaped($0, to: &out) }
    }

    /// Writes a JSON string literal from UTF-8 bytes as a database hands them over (no `String`):
    /// the same bytes as `writeString(String(decoding: bytes, as: UTF8.self))`. Bytes that are all
    /// ASCII (the common case) are escaped in place; anything else goes through
    /// `String(decoding:)`, so ill-formed UTF-8 is repaired exactly as the `String` path repairs it.
    public static func writeString(utf8 bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) { writeString(utf8: bytes, to: &out) }

    static func writeString<O: JSONByteOutput>(utf8 bytes: UnsafeRawBufferPointer, to out: inout O) {
        let b = bytes.bindMemory(to: UInt8.self)
        let n = b.count
        guard let base = b.baseAddress, n > 0 else {
            out.appendByte(UInt8(ascii: "\""))
            out.appendByte(UInt8(ascii: "\""))
            return
        }
        let first = scan(base, from: 0, count: n, stopAtNonASCII: true)
        if first == n {  // plain printable ASCII: one copy
            out.appendByte(UInt8(ascii: "\""))
            out.appendBytes(b)
            out.appendByte(UInt8(ascii: "\""))
            return
        }
        var i = first
        while i < n && base[i] < 0x80 { i += 1 }
        if i == n {
            writeEscaped(b, to: &out)
        } else {
            writeString(String(decoding: b, as: UTF8.self), to: &out)
        }
    }

    /// The index of the first byte at or after `from` that a JSON string must escape (`"`, `\`,
    /// a control character below 0x20), or of the first byte ≥ 0x80 with `stopAtNonASCII`; `count`
    /// when there is none. Eight bytes per step (SWAR): a byte below 0x20 sets the top bit of
    /// `(w - 0x20…) & ~w`, a byte equal to `c` that of `((w ^ c…) - 0x01…) & ~(w ^ c…)`; a borrow
    /// can only flag a byte above a true hit, so the lowest flagged byte is the first hit (its
    /// place: the trailing zero bits of the little-endian word, over 8). The last bytes of a text
    /// of 8 or more are one more word, the 8 ending at `count`: the bytes it shares with the words
    /// before are clean, and flag nothing.
    @inline(__always)
    static func scan(_ p: UnsafePointer<UInt8>, from: Int, count n: Int, stopAtNonASCII: Bool) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let nonASCII: UInt64 = stopAtNonASCII ? high : 0
        let raw = UnsafeRawPointer(p)
        @inline(__always) func hits(at i: Int) -> UInt64 {
            let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let control = (w &- ones &* 0x20) & ~w
            let q = w ^ (ones &* 0x22)
            let quote = (q &- ones) & ~q
            let s = w ^ (ones &* 0x5C)
            let backslash = (s &- ones) & ~s
            return ((control | quote | backslash) & high) | (w & nonASCII)
        }
        var i = from
        while i &+ 8 <= n {
            let h = hits(at: i)
            if h != 0 { return i &+ (h.trailingZeroBitCount &>> 3) }
            i &+= 8
        }
        if i == n { return n }
        if n &- from >= 8 {
            let h = hits(at: n &- 8)
            return h == 0 ? n : n &- 8 &+ (h.trailingZeroBitCount &>> 3)
        }
        while i < n {
            let c = p[i]
            if c < 0x20 || c == 0x22 || c == 0x5C || (stopAtNonASCII && c >= 0x80) { return i }
            i &+= 1
        }
        return n
    }

    /// The quoted, escaped literal of well-formed UTF-8 `bytes` (RFC 8259 §7): `"`, `\` and
    /// control characters escaped, everything else as it is (runs copied whole).
    static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) { writeEscaped(bytes, to: &out) }

    static func writeEscaped<O: JSONByteOutput>(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout O) {
        out.appendByte(UInt8(ascii: "\""))
        let n = bytes.count
        guard let base = bytes.baseAddress else {
            out.appendByte(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var i = 0
        while true {
            i = scan(base, from: i, count: n, stopAtNonASCII: false)
            if i == n { break }
            if runStart < i { out.appendBytes(UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            let b = bytes[i]
            out.appendByte(0x5C)
            switch b {
            case 0x22: out.appendByte(0x22)
            case 0x5C: out.appendByte(0x5C)
            case 0x0A: out.appendByte(UInt8(ascii: "n"))
            case 0x0D: out.appendByte(UInt8(ascii: "r"))
            case 0x09: out.appendByte(UInt8(ascii: "t"))
            case 0x08: out.appendByte(UInt8(ascii: "b"))
            case 0x0C: out.appendByte(UInt8(ascii: "f"))
            default:
                out.appendByte(UInt8(ascii: "u"))
                out.appendByte(0x30)
                out.appendByte(0x30)
                out.appendByte(hex[Int(b >> 4)])
                out.appendByte(hex[Int(b & 0xF)])
            }
            i += 1
            runStart = i
        }
        if runStart < n { out.appendBytes(UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
        out.appendByte(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serializedString() }
}
