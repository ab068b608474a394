#if canImport(CPostgres)
import CPostgres
import TSSync  // the C library (strtod)

/// Row `row` of a PostgreSQL result (`PGresult`, text format:
/// https://www.postgresql.org/docs/15/libpq-exec.html#LIBPQ-EXEC-SELECT-INFO), read column by column
/// with `PQgetvalue`. A pointer and an index, nothing allocated; valid only while the result is
/// (inside the `map` closure that received it). The text-format value is parsed as SQLite would
/// convert it: integers, doubles, text, booleans `t`/`f` as 1/0, `bytea` (hex format) as bytes;
/// NULL reads as 0 or "".
public struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    init(result: OpaquePointer, row: Int32) {
        self.result = result
        self.row = row
    }
}

extension PostgresRow: RowColumns {
    public var columnCount: Int32 { PQnfields(result) }

    public func isNull(_ i: Int32) -> Bool { PQgetisnull(result, row, i) != 0 }

    public func int(_ i: Int32) -> Int64 {
        let bytes = textBytes(i)
        guard let first = bytes.first else { return 0 }
        if bytes.count == 1 && PQftype(result, i) == PostgresTypeOID.bool { return first == UInt8(ascii: "t") ? 1 : 0 }
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
        let d = double(i)
        guard d.isFinite, d > -9.2e18, d < 9.2e18 else { return 0 }
        return Int64(d)
    }

    public func double(_ i: Int32) -> Double {
        guard PQgetisnull(result, row, i) == 0, let p = PQgetvalue(result, row, i) else { return 0 }
        if PQftype(result, i) == PostgresTypeOID.bool { return p.pointee == CChar(UInt8(ascii: "t")) ? 1 : 0 }
        return strtod(p, nil)  // also reads "Infinity", "NaN"
    }

    /// The text-format value; a boolean as "1"/"0", as SQLite stores it.
    public func string(_ i: Int32) -> String {
        if PQftype(result, i) == PostgresTypeOID.bool {
            guard PQgetisnull(result, row, i) == 0 else { return "" }
            return int(i) == 1 ? "1" : "0"
        }
        return String(decoding: textBytes(i), as: UTF8.self)
    }

    /// The text-format value's bytes (`PQgetvalue` + `PQgetlength`); a boolean as "1"/"0", like `string`.
    public func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if PQftype(result, i) == PostgresTypeOID.bool {
            var s = string(i)
            return try s.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
        return try body(UnsafeRawBufferPointer(textBytes(i)))
    }

    /// `bytea` arrives in hex format, `\x` and two hex digits per byte
    /// (https://www.postgresql.org/docs/15/datatype-binary.html#id-1.5.7.12.9); any other type gives its text bytes.
    public func blob(_ i: Int32) -> [UInt8] {
        let bytes = textBytes(i)
        guard PQftype(result, i) == PostgresTypeOID.bytea, bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else {
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

    /// By the column's type: integers and booleans as `.int`, floating and numeric as `.double`,
    /// `bytea` as `.blob`, everything else as `.text`.
    public func value(_ i: Int32) -> SQLValue {
        if isNull(i) { return .null }
        switch PQftype(result, i) {
        case PostgresTypeOID.int8, PostgresTypeOID.int4, PostgresTypeOID.int2, PostgresTypeOID.oid, PostgresTypeOID.bool:
            return .int(int(i))
        case PostgresTypeOID.float8, PostgresTypeOID.float4, PostgresTypeOID.numeric: return .double(double(i))
        case PostgresTypeOID.bytea: return .blob(blob(i))
        default: return .text(string(i))
        }
    }

    public func columnName(_ i: Int32) -> String { PQfname(result, i).map { String(cString: $0) } ?? "" }

    /// The raw text-format bytes of column `i` (empty for NULL).
    private func textBytes(_ i: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = PQgetvalue(result, row, i) else { return UnsafeBufferPointer(start: nil, count: 0) }
        let n = Int(PQgetlength(result, row, i))
        return UnsafeRawPointer(p).withMemoryRebound(to: UInt8.self, capacity: n) { UnsafeBufferPointer(start: $0, count: n) }
    }
}
#else
/// A build without libpq (macOS) has no PostgreSQL results, so no PostgreSQL rows: the type has no
/// values, and `Row.postgres` never occurs.
public enum PostgresRow {}

extension PostgresRow: RowColumns {
    public var columnCount: Int32 { switch self {} }
    public func isNull(_ i: Int32) -> Bool { switch self {} }
    public func int(_ i: Int32) -> Int64 { switch self {} }
    public func double(_ i: Int32) -> Double { switch self {} }
    public func string(_ i: Int32) -> String { switch self {} }
    public func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { switch self {} }
    public func blob(_ i: Int32) -> [UInt8] { switch self {} }
    public func value(_ i: Int32) -> SQLValue { switch self {} }
    public func columnName(_ i: Int32) -> String { switch self {} }
}
#endif
