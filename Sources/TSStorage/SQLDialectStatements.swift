/// The statements the two SQL dialects write differently, one conformance per dialect
/// (`SQLDialectStatements+SQLite.swift`, `SQLDialectStatements+Postgres.swift`). Code above
/// storage asks for what it needs (a locking read, a change that returns its row, a lock held to
/// the commit, the schema's tables) through `SQLConnection` and never branches on the dialect.
///
/// The conformances run their statements through the `SQLConnection` they are given, so its
/// statement counter sees them.
protocol SQLDialectStatements: Sendable {
    /// The text of `query` for this dialect.
    func sql(_ query: LockingSelect) -> String
    /// Runs `change` and returns the row it names (see `ChangeReturning`).
    func run<T>(_ change: ChangeReturning, on c: SQLConnection, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T?
    /// Takes the lock `key` until the open transaction ends.
    func lockUntilTransactionEnds(key: Int64, on c: SQLConnection) throws
    /// The schema's own tables, ordered by name, each with the tables its foreign keys reference.
    func tables(on c: SQLConnection) throws -> [SchemaTable]
    /// Starts a read-only transaction that sees one snapshot for all its statements.
    var beginReadSnapshot: String { get }
    /// A query that counts the tables named `name` in the schema (0 or 1).
    func countTables(named name: String) -> String
    /// An SQL expression for the current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
    var nowISO8601: String { get }
}

extension SQLDialect {
    var statements: any SQLDialectStatements {
        switch self {
        case .sqlite: return SQLiteStatements()
        case .postgres: return PostgresStatements()
        }
    }
}

/// A `SELECT` whose rows the transaction locks until it ends where the dialect can lock rows
/// (PostgreSQL: `FOR UPDATE`, optionally `OF alias`). SQLite needs no clause: its single writer
/// already serialises every write transaction. Build it once (a `static let`).
public struct LockingSelect: Sendable {
    let select: String
    let forUpdate: String

    public init(_ select: String, lockingRowsOf alias: String? = nil) {
        self.select = select
        forUpdate = PostgresStatements.forUpdate(select, of: alias)
    }

    /// PostgreSQL `FOR NO KEY UPDATE` (https://www.postgresql.org/docs/15/explicit-locking.html#LOCKING-ROWS):
    /// the lock an `UPDATE` of non-key columns takes. It orders this transaction with the others
    /// that update the row, but not with those that insert rows referencing it (a foreign key
    /// check takes `FOR KEY SHARE`): `FOR UPDATE` there would wait for such an inserter, which
    /// then waits for this lock to update the row itself, a deadlock.
    public static func noKeyUpdate(_ select: String) -> LockingSelect {
        LockingSelect(select: select, forUpdate: "\(select) FOR NO KEY UPDATE")
    }

    private init(select: String, forUpdate: String) {
        self.select = select
        self.forUpdate = forUpdate
    }
}

/// An `UPDATE` or `DELETE` of (at most) one row that also answers a few of that row's columns.
/// PostgreSQL does it in one statement with `RETURNING` (one round trip saved). SQLite has
/// `RETURNING` too, but runs it through an ephemeral table that costs more instructions than a
/// primary-key read (callgrind, bench/RESULTS.md "Toggle"), so there the row is read by a plain
/// `SELECT` with the same `WHERE`: before a `DELETE`, after an `UPDATE`. Build it once (a
/// `static let`); arguments are those of the `SET` clause, then those of the `WHERE` clause.
public struct ChangeReturning: Sendable {
    enum Kind: Sendable { case update, delete }
    let kind: Kind
    /// The change alone.
    let change: String
    /// `SELECT columns FROM table WHERE condition`.
    let read: String
    /// The change with `RETURNING columns`.
    let returning: String
    /// `?` in the `SET` clause: the arguments the read skips.
    let setArgumentCount: Int

    public static func update(_ table: String, set assignments: String, where condition: String, returning columns: String) -> ChangeReturning {
        let change = "UPDATE \(table) SET \(assignments) WHERE \(condition)"
        return ChangeReturning(kind: .update, change: change, read: "SELECT \(columns) FROM \(table) WHERE \(condition)",
                               returning: "\(change) RETURNING \(columns)", setArgumentCount: assignments.filter { $0 == "?" }.count)
    }

    public static func delete(from table: String, where condition: String, returning columns: String) -> ChangeReturning {
        let change = "DELETE FROM \(table) WHERE \(condition)"
        return ChangeReturning(kind: .delete, change: change, read: "SELECT \(columns) FROM \(table) WHERE \(condition)",
                               returning: "\(change) RETURNING \(columns)", setArgumentCount: 0)
    }
}

/// A table of the schema and the tables its foreign keys reference (itself included, if it does).
public struct SchemaTable: Sendable, Equatable {
    public let name: String
    public let references: [String]
}
