import CSQLite

/// A view over the current row of a stepping statement (https://sqlite.org/c3ref/column_blob.html).
/// Valid only inside the `map` closure that received it; column indexes are 0-based.
/// Accessors follow SQLite's type conversions (e.g. `int` of NULL is 0, `string` of NULL is "").
public struct Row {
    let handle: OpaquePointer

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }

    public func int(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    public func optionalInt(_ i: Int32) -> Int64? { isNull(i) ? nil : int(i) }

    public func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }
    public func optionalDouble(_ i: Int32) -> Double? { isNull(i) ? nil : double(i) }

    public func string(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
    public func optionalString(_ i: Int32) -> String? { isNull(i) ? nil : string(i) }

    /// Nonzero integer → true.
    public func bool(_ i: Int32) -> Bool { int(i) != 0 }
    public func optionalBool(_ i: Int32) -> Bool? { isNull(i) ? nil : bool(i) }

    public func blob(_ i: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(handle, i) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, i))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
    public func optionalBlob(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : blob(i) }

    /// The column as stored, by its storage class.
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
