/// An incremental RESP2 reply decoder: bytes in, complete values out (RESP spec,
/// https://redis.io/docs/latest/develop/reference/protocol-spec/). No I/O.
///
/// Linear: every byte is looked at once whatever the chunking (a value trickled one byte at a
/// time costs the same as one read): partial lines and partial bulk strings are kept, nested
/// arrays are a stack of partial arrays, nothing is re-parsed. Limits are checked from the header
/// alone, before anything is buffered: a bulk string over `maxBulkBytes`, an array over
/// `maxArrayCount` elements or nested deeper than `maxDepth`, a line (simple string, error,
/// integer, header) over `maxLineBytes`, or one top-level value over `maxValueBytes` in all is a
/// `RESPDecoder.Failure`; the connection is then unusable (the caller closes it).
public struct RESPDecoder: Sendable {
    public struct Limits: Sendable, Equatable {
        public var maxBulkBytes: Int
        public var maxArrayCount: Int
        public var maxDepth: Int
        public var maxLineBytes: Int
        public var maxValueBytes: Int

        public init(maxBulkBytes: Int = 16 << 20, maxArrayCount: Int = 1024, maxDepth: Int = 8, maxLineBytes: Int = 64 * 1024,
                    maxValueBytes: Int = 17 << 20) {
            self.maxBulkBytes = maxBulkBytes
            self.maxArrayCount = maxArrayCount
            self.maxDepth = maxDepth
            self.maxLineBytes = maxLineBytes
            self.maxValueBytes = maxValueBytes
        }
    }

    public struct Failure: Error, Equatable, CustomStringConvertible, Sendable {
        public let reason: String
        public var description: String { "RESP protocol error: \(reason)" }
    }

    public let limits: Limits
    /// Partial arrays, outermost first.
    private var stack: [(remaining: Int, items: [RESPValue])] = []
    /// The line being read (type byte included, CR LF not).
    private var line: [UInt8] = []
    private var sawCR = false
    /// The bulk string being read: bytes still expected (then CR LF), and those read.
    private var bulkRemaining = -1
    private var bulk: [UInt8] = []
    private var bulkTerminator = 0
    /// Bytes of the current top-level value so far.
    private var valueBytes = 0
    private var failed: Failure?

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// True when no value is partly read.
    public var isIdle: Bool { stack.isEmpty && line.isEmpty && !sawCR && bulkRemaining < 0 && bulkTerminator == 0 }

    /// Consumes `bytes` and returns the values they complete, in order. After a failure every
    /// call throws it again.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws -> [RESPValue] {
        if let failed { throw failed }
        var out: [RESPValue] = []
        do { try consume(bytes, into: &out) } catch let f as Failure {
            failed = f
            throw f
        }
        return out
    }

    public mutating func feed(_ bytes: [UInt8]) throws -> [RESPValue] {
        try bytes.withUnsafeBytes { try feed($0) }
    }

    private mutating func consume(_ bytes: UnsafeRawBufferPointer, into out: inout [RESPValue]) throws {
        var i = 0
        let n = bytes.count
        while i < n {
            if bulkRemaining > 0 {
                let take = min(bulkRemaining, n - i)
                bulk.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + take)]))
                bulkRemaining -= take
                i += take
                continue
            }
            if bulkRemaining == 0 {
                // The CR LF after a bulk string's bytes.
                let expected: UInt8 = bulkTerminator == 0 ? 13 : 10
                guard bytes[i] == expected else { throw Failure(reason: "bulk string not followed by CRLF") }
                i += 1
                bulkTerminator += 1
                if bulkTerminator == 2 {
                    bulkRemaining = -1
                    bulkTerminator = 0
                    let value = RESPValue.bulkString(bulk)
                    bulk = []
                    complete(value, into: &out)
                }
                continue
            }
            // Line mode: up to LF.
            let byte = bytes[i]
            i += 1
            if sawCR {
                guard byte == 10 else { throw Failure(reason: "CR not followed by LF") }
                sawCR = false
                let l = line
                line = []
                try process(line: l, into: &out)
                continue
            }
            if byte == 13 { sawCR = true; continue }
            if byte == 10 { throw Failure(reason: "bare LF in a line") }
            guard line.count < limits.maxLineBytes else { throw Failure(reason: "line longer than \(limits.maxLineBytes) bytes") }
            line.append(byte)
        }
    }

    private mutating func account(_ n: Int) throws {
        valueBytes += n
        guard valueBytes <= limits.maxValueBytes else { throw Failure(reason: "value larger than \(limits.maxValueBytes) bytes") }
    }

    private mutating func process(line: [UInt8], into out: inout [RESPValue]) throws {
        guard let type = line.first else { throw Failure(reason: "empty line") }
        try account(line.count + 2)
        let rest = line.dropFirst()
        switch type {
        case UInt8(ascii: "+"):
            complete(.simpleString(String(decoding: rest, as: UTF8.self)), into: &out)
        case UInt8(ascii: "-"):
            complete(.error(String(decoding: rest, as: UTF8.self)), into: &out)
        case UInt8(ascii: ":"):
            complete(.integer(try Self.integer(rest)), into: &out)
        case UInt8(ascii: "$"):
            guard let length = try Self.length(rest, "bulk", limit: limits.maxBulkBytes, of: "bulk string", unit: ("bytes", "byte")) else {
                return complete(.bulkString(nil), into: &out)
            }
            try account(length + 2)
            bulk = []
            bulk.reserveCapacity(length)
            bulkRemaining = length
        case UInt8(ascii: "*"):
            guard let count = try Self.length(rest, "array", limit: limits.maxArrayCount, of: "array", unit: ("elements", "element")) else {
                return complete(.array(nil), into: &out)
            }
            if count == 0 { return complete(.array([]), into: &out) }
            guard stack.count < limits.maxDepth else { throw Failure(reason: "arrays nested deeper than \(limits.maxDepth)") }
            var items: [RESPValue] = []
            items.reserveCapacity(count)
            stack.append((count, items))
        default:
            throw Failure(reason: "unknown type byte 0x\(String(type, radix: 16))")
        }
    }

    /// Adds a finished value to the innermost open array, closing arrays it completes; a finished
    /// top-level value goes to `out`.
    private mutating func complete(_ value: RESPValue, into out: inout [RESPValue]) {
        var v = value
        while !stack.isEmpty {
            let top = stack.count - 1
            stack[top].items.append(v)
            stack[top].remaining -= 1
            if stack[top].remaining > 0 { return }
            v = .array(stack.removeLast().items)
        }
        valueBytes = 0
        out.append(v)
    }

    /// The length line of a bulk string or an array (RESP2): nil for -1 (the null value), else a
    /// count from 0 to `limit`; any other negative number, or one over the limit, is refused
    /// before anything is allocated for it.
    static func length(_ text: ArraySlice<UInt8>, _ kind: String, limit: Int, of what: String,
                       unit: (plural: String, singular: String)) throws -> Int? {
        let n = try integer(text)
        if n == -1 { return nil }
        guard n >= 0 else { throw Failure(reason: "negative \(kind) length \(n)") }
        guard n <= Int64(limit) else { throw Failure(reason: "\(what) of \(n) \(unit.plural) over the \(limit)-\(unit.singular) limit") }
        return Int(n)
    }

    /// A RESP integer: optional '-', then 1-19 decimal digits, no overflow.
    static func integer(_ text: ArraySlice<UInt8>) throws -> Int64 {
        var digits = text[...]
        var negative = false
        if digits.first == UInt8(ascii: "-") { negative = true; digits = digits.dropFirst() }
        else if digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19 else { throw Failure(reason: "bad integer") }
        var value: Int64 = 0
        for d in digits {
            guard d >= 48, d <= 57 else { throw Failure(reason: "bad integer") }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(Int64(d - 48))
            guard !o1, !o2 else { throw Failure(reason: "integer overflow") }
            value = s
        }
        return negative ? -value : value
    }
}
