/// `IN (?, ?, …)` lists: the portable way (SQLite and PostgreSQL) to pass a set of values, where
/// SQLite-only code used `json_each(?)`. Lists are cut into chunks of `maxChunk` values so a
/// statement stays far below either engine's parameter limit (SQLite 32766, PostgreSQL 65535), and
/// the few distinct chunk sizes keep the prepared-statement cache small.
enum SQLList {
    /// Values per statement at most.
    static let maxChunk = 500

    /// "?, ?, …" with `count` markers.
    static func placeholders(_ count: Int) -> String {
        var s = ""
        s.reserveCapacity(count * 3)
        for i in 0..<count { s += i == 0 ? "?" : ", ?" }
        return s
    }

    static func chunks<T>(_ values: [T], size: Int = maxChunk) -> [ArraySlice<T>] {
        stride(from: 0, to: values.count, by: size).map { values[$0..<min($0 + size, values.count)] }
    }
}
