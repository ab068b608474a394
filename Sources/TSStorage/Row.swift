import CSQLite
import TSSync  // the C library (strtod)
#if canImport(CPostgres)
import CPostgres
#endif

/// A view over one result row (https://sqlite.org/c3ref/column_blob.html): the current row of a
/// stepping SQLite statement, or row `row` of a PostgreSQL result (`PGresult`). Valid only inside
/// the `map` closure that received it; column indexes are 0-based. A plain struct of a pointer and
/// an index: reading a SQLite row allocates nothing more than before.
/// Accessors follow SQLite's conversions (e.g. `int` of NULL is 0, `string` of NULL is ""); on
/// PostgreSQL they parse the text-format value: integers, doubles, text, booleans `t`/`f` as 1/0,
/// `bytea` (hex format) as bytes.
public struct Row {
    let handle: OpaquePointer
    /// -1 for SQLite; the row number in the PostgreSQL result otherwise.
    let pgRow: Int32

    init(handle: OpaquePointer) {
        self.handle = handle
        self.pgRow = -1
    }

    init(postgresResult: OpaquePointer, row: Int32) {
        self.handle = postgresResult
        self.pgRow = row
    }

    public var columnCount: Int32 {
        #if canImport(CPostgres)
        if pgRow >= 0 { return PQnfields(handle) }
        #endif
        return sqlite3_column_count(handle)
    }

    public func isNull(_ i: Int32) -> Bool {
        #if canImport(CPostgres)
        if pgRow >= 0 { return PQgetisnull(handle, pgRow, i) != 0 }
        #endif
        return sqlite3_column_type(handle, i) == SQLITE_NULL
    }

    public func int(_ i: Int32) -> Int64 {
        #if canImport(CPostgres)
        if pgRow >= 0 { return pgInt(i) }
        #endif
        return sqlite3_column_int64(handle, i)
    }
    public func optionalInt(_ i: Int32) -> Int64? { isNull(i) ? nil : int(i) }

    public func double(_ i: Int32) -> Double {
        #if canImport(CPostgres)
        if pgRow >= 0 { return pgDouble(i) }
        #endif
        return sqlite3_column_double(handle, i)
    }
    public func optionalDouble(_ i: Int32) -> Double? { isNull(i) ? nil : double(i) }

    public func string(_ i: Int32) -> String {
        #if canImport(CPostgres)
        if pgRow >= 0 { return pgString(i) }
        #endif
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
    public func optionalString(_ i: Int32) -> String? { isNull(i) ? nil : string(i) }

    /// The UTF-8 bytes of column `i`, as `string(i)` would read them but without a `String`: SQLite's
    /// own text buffer (`sqlite3_column_text`, then `sqlite3_column_bytes`:
    /// https://sqlite.org/c3ref/column_blob.html), or PostgreSQL's text-format value (`PQgetvalue`
    /// + `PQgetlength`; a boolean as "1"/"0", like `string`). The buffer is valid only inside
    /// `body` (SQLite may move it at the next step or a conversion of the column); empty for NULL.
    /// Not necessarily well-formed UTF-8: the reader decides how to repair (`string` repairs with
    /// U+FFFD).
    public func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        #if canImport(CPostgres)
        if pgRow >= 0 {
            if PQftype(handle, i) == PostgresTypeOID.bool {
                var s = pgString(i)
                return try s.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
            }
            guard let p = PQgetvalue(handle, pgRow, i) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            return try body(UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(handle, pgRow, i))))
        }
        #endif
        guard let p = sqlite3_column_text(handle, i) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, i))))
    }

    /// Nonzero integer → true.
    public func bool(_ i: Int32) -> Bool { int(i) != 0 }
    public func optionalBool(_ i: Int32) -> Bool? { isNull(i) ? nil : bool(i) }

    public func blob(_ i: Int32) -> [UInt8] {
        #if canImport(CPostgres)
        if pgRow >= 0 { return pgBlob(i) }
        #endif
        guard let p = sqlite3_column_blob(handle, i) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, i))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
    public func optionalBlob(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : blob(i) }

    /// The column as stored, by its storage class (PostgreSQL: by its column type).
    public func value(_ i: Int32) -> SQLValue {
        #if canImport(CPostgres)
        if pgRow >= 0 {
            if isNull(i) { return .null }
            switch PQftype(handle, i) {
            case PostgresTypeOID.int8, PostgresTypeOID.int4, PostgresTypeOID.int2, PostgresTypeOID.oid, PostgresTypeOID.bool:
                return .int(int(i))
            case PostgresTypeOID.float8, PostgresTypeOID.float4, PostgresTypeOID.numeric: return .double(double(i))
            case PostgresTypeOID.bytea: return .blob(blob(i))
            default: return .text(string(i))
            }
        }
        #endif
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .int(int(i))
        case SQLITE_FLOAT: return .double(double(i))
        case SQLITE_TEXT: return .text(string(i))
        case SQLITE_BLOB: return .blob(blob(i))
        default: return .null
        }
    }

    public func columnName(_ i: Int32) -> String {
        #if canImport(CPostgres)
        if pgRow >= 0 { return PQfname(handle, i).map { String(cString: $0) } ?? "" }
        #endif
        guard let p = sqlite3_column_name(handle, i) else { return "" }
        return String(cString: p)
    }
}

#if canImport(CPostgres)
extension Row {
    /// The raw text-format bytes of column `i` (empty for NULL).
    private func pgBytes(_ i: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = PQgetvalue(handle, pgRow, i) else { return UnsafeBufferPointer(start: nil, count: 0) }
        let n = Int(PQgetlength(handle, pgRow, i))
        return UnsafeRawPointer(p).withMemoryRebound(to: UInt8.self, capacity: n) { UnsafeBufferPointer(start: $0, count: n) }
    }

    func pgInt(_ i: Int32) -> Int64 {
        let bytes = pgBytes(i)
        guard let first = bytes.first else { return 0 }
        if bytes.count == 1 && PQftype(handle, i) == PostgresTypeOID.bool { return first == UInt8(ascii: "t") ? 1 : 0 }
        // Fast path: an optional sign and decimal digits (int2/int4/int8, counts, sums).
        var value: Int64 = 0
        var index = 0
        let negative = first == UInt8(ascii: "-")
        if negative || first == UInt8(ascii: "+") { index = 1 }
        var digits = 0
        while index < bytes.count {
            let b = bytes[index]
            guard b >= 48 && b <= 57 else { break }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(b - 48))
            if o1 || o2 { break }
            value = a
            digits += 1
            index += 1
        }
        if index == bytes.count && digits > 0 { return negative ? -value : value }
        // Anything else (numeric "12.0", a double): SQLite's conversion, truncated toward zero.
        let d = pgDouble(i)
        guard d.isFinite, d > -9.2e18, d < 9.2e18 else { return 0 }
        return Int64(d)
    }

    func pgDouble(_ i: Int32) -> Double {
        guard PQgetisnull(handle, pgRow, i) == 0, let p = PQgetvalue(handle, pgRow, i) else { return 0 }
        if PQftype(handle, i) == PostgresTypeOID.bool { return p.pointee == CChar(UInt8(ascii: "t")) ? 1 : 0 }
        return strtod(p, nil)  // also reads "Infinity", "NaN"
    }

    func pgString(_ i: Int32) -> String {
        if PQftype(handle, i) == PostgresTypeOID.bool {
            guard PQgetisnull(handle, pgRow, i) == 0 else { return "" }
            return pgInt(i) == 1 ? "1" : "0"
        }
        return String(decoding: pgBytes(i), as: UTF8.self)
    }

    /// `bytea` arrives in hex format, `\x` and two hex digits per byte
    /// (https://www.postgresql.org/docs/15/datatype-binary.html#id-1.5.7.12.9); any other type gives its text bytes.
    func pgBlob(_ i: Int32) -> [UInt8] {
        let bytes = pgBytes(i)
        guard PQftype(handle, i) == PostgresTypeOID.bytea, bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else {
            return Array(bytes)
        }
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return 0
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count - 2) / 2)
        var index = 2
        while index + 1 < bytes.count {
            out.append(nibble(bytes[index]) << 4 | nibble(bytes[index + 1]))
            index += 2
        }
        return out
    }
}
#endif
