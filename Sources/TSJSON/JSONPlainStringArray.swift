/// A fast reader for the one body shape a hot route gets in practice: a JSON text that is exactly
/// one object with one member whose value is an array of plain strings, such as
/// `{"postIds":["3c58…","94bd…"]}` (RFC 8259 §2: whitespace allowed around every token).
/// "Plain" strings are ASCII from 0x20 on without `"` or `\` (no escapes), so a string's bytes
/// are its value. No tree, no schema walk: one pass over the bytes.
///
/// It answers nil for anything else, valid JSON included (escapes, non-ASCII, other members,
/// other value types, a count outside `count`): the caller then parses in full and checks the
/// schema, with its own errors. Whatever it returns equals the member's strings in
/// `JSONValue.parse` of the same bytes (fuzz/json checks this on every input).
public enum JSONPlainStringArray {
    /// The strings of `bytes` when they are `{"<member>":[<plain strings>]}` with a count in
    /// `count` (`member`: the member name's UTF-8 bytes, plain as well); nil otherwise.
    public static func read(_ bytes: [UInt8], member: [UInt8], count: ClosedRange<Int>) -> [String]? {
        bytes.withUnsafeBufferPointer { b in
            ranges(b, member: member, count: count)?.map { String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self) }
        }
    }

    /// Where the strings `read` would return are in `bytes` (each string's bytes between its
    /// quotes, which are its value), or nil where `read` answers nil: the same strings without a
    /// `String` each, for a reader that copies or compares them as bytes.
    public static func ranges(_ bytes: [UInt8], member: [UInt8], count: ClosedRange<Int>) -> [Range<Int>]? {
        bytes.withUnsafeBufferPointer { ranges($0, member: member, count: count) }
    }

    static func ranges(_ b: UnsafeBufferPointer<UInt8>, member: [UInt8], count: ClosedRange<Int>) -> [Range<Int>]? {
        let n = b.count
        var i = 0
        @inline(__always) func skipSpace() {
            while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        }
        @inline(__always) func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard i < n, b[i] == byte else { return false }
            i += 1
            return true
        }
        /// A plain string's bytes (after its opening quote, up to its closing quote), or nil.
        func plainString() -> Range<Int>? {
            guard let base = b.baseAddress else { return nil }
            let start = i
            // Eight bytes a step to the first `"`, `\`, control or non-ASCII byte (as the writer scans).
            i = JSONValue.scan(base, from: i, count: n, stopAtNonASCII: true)
            guard i < n, b[i] == 0x22 else { return nil }
            i += 1
            return start..<(i - 1)
        }
        guard take(0x7B), take(0x22), let key = plainString(), key.count == member.count,
              zip(b[key], member).allSatisfy({ $0 == $1 }), take(0x3A), take(0x5B) else { return nil }
        var out: [Range<Int>] = []
        out.reserveCapacity(min(count.upperBound, 64))
        skipSpace()
        if i < n, b[i] == 0x5D {
            i += 1
        } else {
            while true {
                guard take(0x22), let s = plainString(), out.count < count.upperBound else { return nil }
                out.append(s)
                if take(0x2C) { continue }
                guard take(0x5D) else { return nil }
                break
            }
        }
        guard take(0x7D) else { return nil }
        skipSpace()
        guard i == n, count.contains(out.count) else { return nil }
        return out
    }
}
