/// Statement arguments whose first texts are slices of one UTF-8 buffer, such as the ids of a
/// request body where they stand: `ranges` bound as texts, then `nulls` NULLs (a statement with
/// room for more texts than this run has), then `rest`. SQLite binds the slices where they are,
/// without a `String` per text (`SQLiteConnection.forEachRow(_:_:_:)`); a backend without such a
/// path gets the same arguments as `values`.
public struct SQLTextSlices: Sendable {
    public let bytes: [UInt8]
    public let ranges: [Range<Int>]
    public let nulls: Int
    public let rest: [SQLValue]

    /// Every range lies within `bytes` and holds UTF-8 (the caller's promise; checked here, so a
    /// bad range fails at once instead of reading past the buffer).
    public init(bytes: [UInt8], ranges: [Range<Int>], nulls: Int = 0, rest: [SQLValue] = []) {
        precondition(nulls >= 0 && ranges.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= bytes.count },
                     "text slices lie within their buffer")
        self.bytes = bytes
        self.ranges = ranges
        self.nulls = nulls
        self.rest = rest
    }

    /// The number of parameters these arguments fill.
    public var count: Int { ranges.count + nulls + rest.count }

    /// The same arguments, one `SQLValue` each.
    public var values: [SQLValue] {
        var out: [SQLValue] = []
        out.reserveCapacity(count)
        bytes.withUnsafeBufferPointer { b in
            for r in ranges { out.append(.text(String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self))) }
        }
        for _ in 0..<nulls { out.append(.null) }
        out.append(contentsOf: rest)
        return out
    }
}
