/// What one engine's row gives: the accessors `Row` forwards to (`SQLiteRow`, `PostgresRow`).
/// Column indexes are 0-based; a NULL reads as 0, 0.0, "" or no bytes, as SQLite converts it.
protocol RowColumns {
    var columnCount: Int32 { get }
    func isNull(_ i: Int32) -> Bool
    func int(_ i: Int32) -> Int64
    func double(_ i: Int32) -> Double
    func string(_ i: Int32) -> String
    func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    func blob(_ i: Int32) -> [UInt8]
    func value(_ i: Int32) -> SQLValue
    func columnName(_ i: Int32) -> String
}

/// A view over one result row: the current row of a stepping SQLite statement (`SQLiteRow`,
/// https://sqlite.org/c3ref/column_blob.html) or one row of a PostgreSQL result (`PostgresRow`).
/// Valid only inside the `map` closure that received it; column indexes are 0-based.
///
/// What the domain's queries read, whatever the engine: each accessor switches once on the engine
/// and calls that engine's row, a concrete type (no existential, nothing allocated: a SQLite row
/// is one pointer, as before). Accessors follow SQLite's conversions (e.g. `int` of NULL is 0,
/// `string` of NULL is ""); the PostgreSQL row parses its text-format values to match.
///
/// The numeric accessors are `@inlinable` (with `SQLiteRow`'s): a query's row loop in another
/// module then reads a SQLite column with the engine switch and the `sqlite3_column_*` call inline,
/// as it did when a row was a SQLite statement handle alone.
public enum Row {
    case sqlite(SQLiteRow)
    case postgres(PostgresRow)

    @inlinable
    public var columnCount: Int32 {
        switch self {
        case .sqlite(let r): r.columnCount
        case .postgres(let r): r.columnCount
        }
    }

    @inlinable
    public func isNull(_ i: Int32) -> Bool {
        switch self {
        case .sqlite(let r): r.isNull(i)
        case .postgres(let r): r.isNull(i)
        }
    }

    @inlinable
    public func int(_ i: Int32) -> Int64 {
        switch self {
        case .sqlite(let r): r.int(i)
        case .postgres(let r): r.int(i)
        }
    }

    @inlinable
    public func optionalInt(_ i: Int32) -> Int64? {
        switch self {
        case .sqlite(let r): r.isNull(i) ? nil : r.int(i)
        case .postgres(let r): r.isNull(i) ? nil : r.int(i)
        }
    }

    @inlinable
    public func double(_ i: Int32) -> Double {
        switch self {
        case .sqlite(let r): r.double(i)
        case .postgres(let r): r.double(i)
        }
    }

    @inlinable
    public func optionalDouble(_ i: Int32) -> Double? {
        switch self {
        case .sqlite(let r): r.isNull(i) ? nil : r.double(i)
        case .postgres(let r): r.isNull(i) ? nil : r.double(i)
        }
    }

    public func string(_ i: Int32) -> String {
        switch self {
        case .sqlite(let r): r.string(i)
        case .postgres(let r): r.string(i)
        }
    }

    public func optionalString(_ i: Int32) -> String? {
        switch self {
        case .sqlite(let r): r.isNull(i) ? nil : r.string(i)
        case .postgres(let r): r.isNull(i) ? nil : r.string(i)
        }
    }

    /// The UTF-8 bytes of column `i`, as `string(i)` would read them but without a `String`: the
    /// engine's own buffer (SQLite's text of the column, PostgreSQL's text-format value). The
    /// buffer is valid only inside `body` (SQLite may move it at the next step or a conversion of
    /// the column); empty for NULL. Not necessarily well-formed UTF-8: the reader decides how to
    /// repair (`string` repairs with U+FFFD).
    public func withTextBytes<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self {
        case .sqlite(let r): try r.withTextBytes(i, body)
        case .postgres(let r): try r.withTextBytes(i, body)
        }
    }

    /// Nonzero integer → true.
    @inlinable
    public func bool(_ i: Int32) -> Bool { int(i) != 0 }

    @inlinable
    public func optionalBool(_ i: Int32) -> Bool? { optionalInt(i).map { $0 != 0 } }

    public func blob(_ i: Int32) -> [UInt8] {
        switch self {
        case .sqlite(let r): r.blob(i)
        case .postgres(let r): r.blob(i)
        }
    }

    public func optionalBlob(_ i: Int32) -> [UInt8]? {
        switch self {
        case .sqlite(let r): r.isNull(i) ? nil : r.blob(i)
        case .postgres(let r): r.isNull(i) ? nil : r.blob(i)
        }
    }

    /// The column as stored, by its storage class (PostgreSQL: by its column type).
    public func value(_ i: Int32) -> SQLValue {
        switch self {
        case .sqlite(let r): r.value(i)
        case .postgres(let r): r.value(i)
        }
    }

    public func columnName(_ i: Int32) -> String {
        switch self {
        case .sqlite(let r): r.columnName(i)
        case .postgres(let r): r.columnName(i)
        }
    }
}
