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
        var c = Cursor(b: b)
        guard c.take(0x7B), c.take(0x22), let key = c.plainString(), key.count == member.count,
              zip(b[key], member).allSatisfy({ $0 == $1 }), c.take(0x3A), c.take(0x5B) else { return nil }
        var out: [Range<Int>] = []
        out.reserveCapacity(min(count.upperBound, 64))
        c.skipSpace()
        if c.i < b.count, b[c.i] == 0x5D {
            c.i += 1
        } else {
            while true {
                guard c.take(0x22), let s = c.plainString(), out.count < count.upperBound else { return nil }
                out.append(s)
                if c.take(0x2C) { continue }
                guard c.take(0x5D) else { return nil }
                break
            }
        }
        guard c.take(0x7D) else { return nil }
        c.skipSpace()
        guard c.i == b.count, count.contains(out.count) else { return nil }
        return out
    }

    /// A read position in the bytes. A struct with mutating methods, not nested functions over a
    /// captured `var`: a captured position is boxed, and each access to it checked at run time
    /// (`swift_beginAccess`), which cost more than the eight-byte scan of an id.
    private struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0

        @inline(__always) mutating func skipSpace() {
            while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        }

        @inline(__always) mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard i < b.count, b[i] == byte else { return false }
            i += 1
            return true
        }

        /// A plain string's bytes (after its opening quote, up to its closing quote), or nil.
        mutating func plainString() -> Range<Int>? {
            guard let base = b.baseAddress else { return nil }
            let start = i
            // Eight bytes a step to the first `"`, `\`, control or non-ASCII byte (as the writer scans).
            i = JSONValue.scan(base, from: i, count: b.count, stopAtNonASCII: true)
            guard i < b.count, b[i] == 0x22 else { return nil }
            i += 1
            return start..<(i - 1)
        }
    }
}
