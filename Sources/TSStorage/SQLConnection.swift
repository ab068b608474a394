/// The SQL dialect a connection speaks. Queries are written in the subset both engines share
/// (`?` parameters, `ON CONFLICT … DO NOTHING`, no `rowid`); the few statements
/// that differ are written once per dialect in `SQLDialectStatements` and reached through
/// `SQLConnection` (`LockingSelect`, `ChangeReturning`, `lockUntilTransactionEnds`, `schemaTables`).
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgres
}

/// The connection type every layer above storage is written against: the domain's queries take an
/// `SQLConnection` and never name a backend. Behind it is an `SQLBackend` (SQLite or PostgreSQL)
/// and the statements of that backend's dialect.
///
/// Not Sendable: like the connections it wraps, one thread at a time (`Database` guarantees it for
/// the connections it owns). SQLite-only tools (`PRAGMA`s, checkpoints, full-scan statistics,
/// `lastInsertRowID`) are reached through `sqlite`.
public final class SQLConnection {
    let backend: any SQLBackend
    let statements: any SQLDialectStatements
    /// The SQLite connection, nil on PostgreSQL.
    public let sqlite: SQLiteConnection?
    #if DEBUG
    /// Which thread's job holds this connection (SQLConnection+Watchdog.swift).
    let watchdog = ConnectionWatchdog()
    #endif

    init(backend: any SQLBackend) {
        self.backend = backend
        statements = backend.dialect.statements
        sqlite = backend as? SQLiteConnection
    }

    /// Wraps an open SQLite connection.
    public convenience init(sqlite: SQLiteConnection) { self.init(backend: sqlite) }

    public var dialect: SQLDialect { backend.dialect }

    /// Statements executed through `run`/`rows`/`first`/`scalar*` since the connection opened: lets
    /// a test prove that a route answers with one query.
    public private(set) var statementsExecuted: Int = 0

    public func close() { backend.close() }

    // MARK: - Executing SQL

    /// Runs one or more `;`-separated statements without arguments (schemas, migrations).
    public func executeScript(_ sql: String) throws {
        checkScheduling(sql)
        try backend.executeScript(sql)
    }

    /// Runs one transaction-control statement (`BEGIN …`, `COMMIT`, `ROLLBACK`): on SQLite a cached
    /// prepared statement (`SQLiteConnection.executeControl`), on PostgreSQL `executeScript`.
    func executeControl(_ sql: String) throws {
        checkScheduling(sql)
        try backend.executeControl(sql)
    }

    /// Executes one statement to completion and returns `changes` (rows inserted, updated or deleted).
    @discardableResult
    public func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        checkScheduling(sql)
        statementsExecuted &+= 1
        return try backend.run(sql, args)
    }

    /// Every row of the query, each mapped by `map` (which must not keep the `Row`).
    public func rows<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        checkScheduling(sql)
        statementsExecuted &+= 1
        return try backend.rows(sql, args, map)
    }

    /// Calls `body` for every row of the query (the `Row` is valid only during the call), without
    /// collecting results (see `SQLiteConnection.forEachRow`).
    public func forEachRow(_ sql: String, _ args: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        checkScheduling(sql)
        statementsExecuted &+= 1
        try backend.forEachRow(sql, args, body)
    }

    /// `forEachRow` with texts given as slices of one buffer (`SQLTextSlices`): on SQLite bound
    /// where they are, without a `String` each.
    public func forEachRow(_ sql: String, _ args: SQLTextSlices, _ body: (Row) throws -> Void) throws {
        checkScheduling(sql)
        statementsExecuted &+= 1
        try backend.forEachRow(sql, args, body)
    }

    /// The first row mapped by `map`, or nil when the query returns no rows.
    public func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        checkScheduling(sql)
        statementsExecuted &+= 1
        return try backend.first(sql, args, map)
    }

    /// Says that this read will run `sql` with `args` (arguments that do not depend on an earlier
    /// statement's rows): on PostgreSQL it then travels in one round trip with the next statement
    /// run, and its rows wait until `rows`/`forEachRow`/`first` asks for it with the same text
    /// and arguments (PostgresConnection+Pipeline.swift). Nothing on SQLite, and nothing outside
    /// a read (`Database.read`); not counted in `statementsExecuted` (the call that reads it is).
    public func prefetch(_ sql: String, _ args: [SQLValue] = []) {
        checkScheduling(sql)
        backend.prefetch(sql, args)
    }

    /// `prefetch` of a statement that `forEachRow(_:_:_:)` runs with the same slices.
    public func prefetch(_ sql: String, _ args: SQLTextSlices) {
        checkScheduling(sql)
        backend.prefetch(sql, args)
    }

    /// Column 0 of the first row as an integer; nil when there is no row or the value is NULL.
    public func scalarInt(_ sql: String, _ args: [SQLValue] = []) throws -> Int64? {
        try first(sql, args) { $0.optionalInt(0) } ?? nil
    }

    /// Column 0 of the first row as text; nil when there is no row or the value is NULL.
    public func scalarString(_ sql: String, _ args: [SQLValue] = []) throws -> String? {
        try first(sql, args) { $0.optionalString(0) } ?? nil
    }

    /// Rows changed by the most recent INSERT/UPDATE/DELETE.
    public var changes: Int { backend.changes }

    /// True while a transaction is open.
    public var isInTransaction: Bool { backend.isInTransaction }

    /// SQLite's `sqlite3_last_insert_rowid`; on PostgreSQL use `RETURNING` (this is then 0).
    public var lastInsertRowID: Int64 { sqlite?.lastInsertRowID ?? 0 }

    /// Prepared statements cached on this connection (SQLite statements, or PostgreSQL named statements).
    public var cachedStatementCount: Int { backend.cachedStatementCount }

    /// SQLite's full-scan statistics (`SQLiteConnection.statementsWithFullTableScans`); empty on PostgreSQL.
    public func statementsWithFullTableScans() -> [(sql: String, steps: Int32)] {
        sqlite?.statementsWithFullTableScans() ?? []
    }

    /// A prepared SQLite statement (`SQLiteConnection.prepare`). SQLite only: PostgreSQL statements
    /// are prepared behind `run`/`rows`/`first`.
    public func prepare(_ sql: String) throws -> Statement {
        guard let c = sqlite else { throw StorageError.misuse("prepare is SQLite-only; use run/rows/first", sql: sql) }
        checkScheduling(sql)
        return try c.prepare(sql)
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: `BEGIN` (SQLite: `BEGIN IMMEDIATE`) … `COMMIT`, or `ROLLBACK`
    /// when `body` (or the commit) throws. Inside an open transaction (e.g. in a `Database.write`
    /// job) it nests as a `SAVEPOINT` instead, so it composes.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        checkScheduling("BEGIN")
        return try backend.transaction(body)
    }

    /// Runs `body` inside `SAVEPOINT` … `RELEASE`; on throw rolls back to the savepoint and
    /// rethrows (on PostgreSQL this also clears the aborted state an error leaves behind).
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        checkScheduling("SAVEPOINT")
        return try backend.savepoint(body)
    }
}
