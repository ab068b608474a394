import CSQLite

/// The current row of a stepping SQLite statement (https://sqlite.org/c3ref/column_blob.html):
/// the statement handle, read column by column with `sqlite3_column_*`. One pointer, nothing
/// allocated; valid only until the statement's next step or reset. Conversions are SQLite's own
/// (`int` of NULL is 0, `string` of NULL is "").
public struct SQLiteRow {
    @usableFromInline let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }
}

extension SQLiteRow: RowColumns {
    @inlinable
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    @inlinable
    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }

    @inlinable
    public func int(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }

    @inlinable
    public func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }

    public func string(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// SQLite's own text buffer: `sqlite3_column_text`, then `sqlite3_column_bytes` (the order the
    /// documentation asks for, so the length is that of the converted text).
    public func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let p = sqlite3_column_text(handle, i) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, i))))
    }

    public func blob(_ i: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(handle, i) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, i))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// By the value's storage class (https://sqlite.org/datatype3.html).
    public func value(_ i: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .int(int(i))
        case SQLITE_FLOAT: return .double(double(i))
        case SQLITE_TEXT: return .text(string(i))
        case SQLITE_BLOB: return .blob(blob(i))
        default: return .null
        }
    }

    public func columnName(_ i: Int32) -> String {
        guard let p = sqlite3_column_name(handle, i) else { return "" }
        return String(cString: p)
    }
}
