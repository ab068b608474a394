#if canImport(CPostgres)
import CPostgres
#endif

/// The SQL dialect a connection speaks. Queries are written in the subset both engines share
/// (`?` parameters, `ON CONFLICT … DO NOTHING`, `RETURNING`, no `rowid`); the few statements
/// that differ (row locks: `SELECT … FOR UPDATE` exists only on PostgreSQL) branch on this.
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgres
}

/// The connection type every layer above storage is written against: the domain's queries take an
/// `SQLConnection` and never name a backend. It is a SQLite connection or a PostgreSQL one (a
/// two-case enum, switched per call: no existential, no extra allocation on the SQLite path).
///
/// Not Sendable: like the connections it wraps, one thread at a time (`Database` guarantees it for
/// the connections it owns). SQLite-only tools (`PRAGMA`s, checkpoints, full-scan statistics,
/// `lastInsertRowID`) are reached through `sqlite`.
public final class SQLConnection {
    enum Backend {
        case sqlite(SQLiteConnection)
        #if canImport(CPostgres)
        case postgres(PostgresConnection)
        #endif
    }

    let backend: Backend

    init(_ backend: Backend) { self.backend = backend }

    /// Wraps an open SQLite connection.
    public convenience init(sqlite: SQLiteConnection) { self.init(.sqlite(sqlite)) }

    public var dialect: SQLDialect {
        switch backend {
        case .sqlite: return .sqlite
        #if canImport(CPostgres)
        case .postgres: return .postgres
        #endif
        }
    }

    /// The SQLite connection, nil on PostgreSQL.
    public var sqlite: SQLiteConnection? {
        if case .sqlite(let c) = backend { return c }
        return nil
    }

    #if canImport(CPostgres)
    var postgres: PostgresConnection? {
        if case .postgres(let c) = backend { return c }
        return nil
    }
    #endif

    /// Statements executed through `run`/`rows`/`first`/`scalar*` since the connection opened: lets
    /// a test prove that a route answers with one query.
    public private(set) var statementsExecuted: Int = 0

    public func close() {
        switch backend {
        case .sqlite(let c): c.close()
        #if canImport(CPostgres)
        case .postgres(let c): c.close()
        #endif
        }
    }

    // MARK: - Executing SQL

    /// Runs one or more `;`-separated statements without arguments (schemas, migrations).
    public func executeScript(_ sql: String) throws {
        switch backend {
        case .sqlite(let c): try c.executeScript(sql)
        #if canImport(CPostgres)
        case .postgres(let c): try c.executeScript(sql)
        #endif
        }
    }

    /// Runs one transaction-control statement (`BEGIN …`, `COMMIT`, `ROLLBACK`): on SQLite a cached
    /// prepared statement (`SQLiteConnection.executeControl`), on PostgreSQL `executeScript`.
    func executeControl(_ sql: String) throws {
        switch backend {
        case .sqlite(let c): try c.executeControl(sql)
        #if canImport(CPostgres)
        case .postgres(let c): try c.executeScript(sql)
        #endif
        }
    }

    /// Executes one statement to completion and returns `changes` (rows inserted, updated or deleted).
    @discardableResult
    public func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        statementsExecuted &+= 1
        switch backend {
        case .sqlite(let c): return try c.run(sql, args)
        #if canImport(CPostgres)
        case .postgres(let c):
            let result = try c.execute(sql, args)
            PQclearResult(result)
            return c.changes
        #endif
        }
    }

    /// Every row of the query, each mapped by `map` (which must not keep the `Row`).
    public func rows<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        statementsExecuted &+= 1
        switch backend {
        case .sqlite(let c): return try c.rows(sql, args, map)
        #if canImport(CPostgres)
        case .postgres(let c):
            let result = try c.execute(sql, args)
            defer { PQclearResult(result) }
            let n = PQrowCount(result)
            var out: [T] = []
            out.reserveCapacity(Int(n))
            for r in 0..<n { out.append(try map(Row(postgresResult: result, row: r))) }
            return out
        #endif
        }
    }

    /// Calls `body` for every row of the query (the `Row` is valid only during the call), without
    /// collecting results (see `SQLiteConnection.forEachRow`).
    public func forEachRow(_ sql: String, _ args: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        statementsExecuted &+= 1
        switch backend {
        case .sqlite(let c): try c.forEachRow(sql, args, body)
        #if canImport(CPostgres)
        case .postgres(let c):
            let result = try c.execute(sql, args)
            defer { PQclearResult(result) }
            let n = PQrowCount(result)
            var i: Int32 = 0
            while i < n {
                try body(Row(postgresResult: result, row: i))
                i += 1
            }
        #endif
        }
    }

    /// The first row mapped by `map`, or nil when the query returns no rows.
    public func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        statementsExecuted &+= 1
        switch backend {
        case .sqlite(let c): return try c.first(sql, args, map)
        #if canImport(CPostgres)
        case .postgres(let c):
            let result = try c.execute(sql, args)
            defer { PQclearResult(result) }
            guard PQrowCount(result) > 0 else { return nil }
            return try map(Row(postgresResult: result, row: 0))
        #endif
        }
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
    public var changes: Int {
        switch backend {
        case .sqlite(let c): return c.changes
        #if canImport(CPostgres)
        case .postgres(let c): return c.changes
        #endif
        }
    }

    /// True while a transaction is open.
    public var isInTransaction: Bool {
        switch backend {
        case .sqlite(let c): return c.isInTransaction
        #if canImport(CPostgres)
        case .postgres(let c): return c.isInTransaction
        #endif
        }
    }

    /// SQLite's `sqlite3_last_insert_rowid`; on PostgreSQL use `RETURNING` (this is then 0).
    public var lastInsertRowID: Int64 { sqlite?.lastInsertRowID ?? 0 }

    /// Prepared statements cached on this connection (SQLite statements, or PostgreSQL named statements).
    public var cachedStatementCount: Int {
        switch backend {
        case .sqlite(let c): return c.cachedStatementCount
        #if canImport(CPostgres)
        case .postgres(let c): return c.cachedStatementCount
        #endif
        }
    }

    /// SQLite's full-scan statistics (`SQLiteConnection.statementsWithFullTableScans`); empty on PostgreSQL.
    public func statementsWithFullTableScans() -> [(sql: String, steps: Int32)] {
        sqlite?.statementsWithFullTableScans() ?? []
    }

    /// A prepared SQLite statement (`SQLiteConnection.prepare`). SQLite only: PostgreSQL statements
    /// are prepared behind `run`/`rows`/`first`.
    public func prepare(_ sql: String) throws -> Statement {
        guard let c = sqlite else { throw StorageError.misuse("prepare is SQLite-only; use run/rows/first", sql: sql) }
        return try c.prepare(sql)
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: `BEGIN` (SQLite: `BEGIN IMMEDIATE`) … `COMMIT`, or `ROLLBACK`
    /// when `body` (or the commit) throws. Inside an open transaction (e.g. in a `Database.write`
    /// job) it nests as a `SAVEPOINT` instead, so it composes.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        switch backend {
        case .sqlite(let c): return try c.transaction(body)
        #if canImport(CPostgres)
        case .postgres(let c):
            if c.isInTransaction { return try savepoint(body) }
            try c.executeScript("BEGIN")
            do {
                let result = try body()
                try c.executeScript("COMMIT")
                return result
            } catch {
                if c.isInTransaction { try? c.executeScript("ROLLBACK") }
                throw error
            }
        #endif
        }
    }

    /// Runs `body` inside `SAVEPOINT` … `RELEASE`; on throw rolls back to the savepoint and
    /// rethrows (on PostgreSQL this also clears the aborted state an error leaves behind).
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        switch backend {
        case .sqlite(let c): return try c.savepoint(body)
        #if canImport(CPostgres)
        case .postgres(let c):
            let name = c.nextSavepointName()
            try c.executeScript("SAVEPOINT \(name)")
            do {
                let result = try body()
                try c.executeScript("RELEASE \(name)")
                return result
            } catch {
                try? c.executeScript("ROLLBACK TO \(name)")
                try? c.executeScript("RELEASE \(name)")
                throw error
            }
        #endif
        }
    }
}

#if canImport(CPostgres)
@inline(__always) func PQclearResult(_ result: OpaquePointer) { PQclear(result) }
@inline(__always) func PQrowCount(_ result: OpaquePointer) -> Int32 { PQntuples(result) }
#endif
