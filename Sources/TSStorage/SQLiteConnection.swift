import CSQLite

/// One SQLite connection (https://sqlite.org/c3ref/sqlite3.html) with a prepared-statement
/// cache. Not Sendable: it is opened in SQLite's multi-thread mode (`SQLITE_OPEN_NOMUTEX`), so
/// it must be used by one thread at a time; `Database` guarantees that for the connections it
/// owns.
public final class SQLiteConnection {
    let handle: OpaquePointer
    public let path: String
    public let isReadOnly: Bool
    let configuration: DatabaseConfiguration
    private var cache: [StatementKey: Statement] = [:]
    /// Transaction-control statements (`BEGIN …`, `COMMIT`, `ROLLBACK`, `SAVEPOINT ts_spN`, …),
    /// prepared once and re-run by step + reset instead of re-parsed by `sqlite3_exec` on every
    /// transaction. Bounded: the texts are a fixed set (savepoint names are per nesting depth).
    private var controlCache: [String: Statement] = [:]
    private static let controlCacheCapacity = 32
    /// Open `savepoint` calls: names are `ts_sp<depth>`, so the text of each level is constant.
    private var savepointDepth = 0
    private var isClosed = false

    /// SQLite's process-wide settings, made once, before the first connection opens
    /// (https://sqlite.org/c3ref/config.html: they are refused once `sqlite3_initialize` has run,
    /// which the first open does). Memory statistics off (`SQLITE_CONFIG_MEMSTATUS`): with them
    /// on, SQLite counts every allocation under one process-wide mutex, and the system library
    /// is built without its lookaside allocator, so a statement run allocates often, from every
    /// reader thread at once. Nothing here reads them (`sqlite3_memory_used`, soft heap limits).
    static let processSettings: Void = {
        _ = ts_sqlite3_config_int(SQLITE_CONFIG_MEMSTATUS, 0)
    }()

    /// Opens (creating if needed, unless `readOnly`) the database at `path` and applies
    /// `configuration`: extended result codes, busy timeout, and for writable connections
    /// `journal_mode`, `synchronous` (with the platform's `durabilityPragmas`), `foreign_keys`
    /// and the defensive flag.
    /// `path` may be a filename, `":memory:"` or a `file:` URI.
    public init(path: String, readOnly: Bool = false, configuration: DatabaseConfiguration) throws {
        _ = Self.processSettings
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |= readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = StorageError.from(db, rc, sql: nil)
            sqlite3_close_v2(db)
            throw StorageError(code: error.code, message: "cannot open database at \(path): \(error.message)", sql: nil)
        }
        self.handle = db
        self.path = path
        self.isReadOnly = readOnly
        self.configuration = configuration
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: configuration.busyTimeout.wholeMilliseconds))
        do {
            if !readOnly {
                var ignored: Int32 = 0
                // https://sqlite.org/c3ref/c_dbconfig_defensive.html: no writable_schema tricks.
                _ = ts_sqlite3_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &ignored)
                try executeScript("PRAGMA journal_mode = \(configuration.journalMode.rawValue)")
                try executeScript("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
                for pragma in Self.durabilityPragmas(for: .current) { try executeScript(pragma) }
                // The WAL's bound: checkpoint every N pages, and shrink the file after a reset.
                // `Database` turns the writer's automatic checkpoint off again and checkpoints on a
                // thread of its own (`WALCheckpointer`).
                try executeScript("PRAGMA journal_size_limit = \(configuration.journalSizeLimitBytes)")
                try executeScript("PRAGMA wal_autocheckpoint = \(max(0, configuration.walAutocheckpointPages))")
                // Toggle under load (bench/history/2026-11.md "Toggle under load, round 3"): the pages a
                // group commit touches stay in the writer's cache, and each job's SAVEPOINT keeps
                // its statement journal in memory (a batch's journal spilled to a temp file that
                // was created, written and unlinked on every commit). The journal holds at most
                // the pages one job changes, and is dropped at its RELEASE.
                try executeScript("PRAGMA cache_size = -\(max(0, configuration.writerCacheKiB))")
                try executeScript("PRAGMA temp_store = MEMORY")
            }
            if configuration.mmapSizeBytes > 0 {
                try executeScript("PRAGMA mmap_size = \(configuration.mmapSizeBytes)")
            }
            try executeScript("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
        } catch {
            cache.removeAll()
            controlCache.removeAll()
            sqlite3_close_v2(db)
            throw error
        }
    }

    deinit { close() }

    /// Finalizes cached statements and closes the connection (idempotent). Statements still
    /// referenced elsewhere keep SQLite's handle alive until they are released (`sqlite3_close_v2`).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        controlCache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: - Executing SQL

    /// Runs one or more `;`-separated statements without arguments (schemas, migrations, pragmas).
    public func executeScript(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            var code = rc
            let ext = sqlite3_extended_errcode(handle)
            if ext & 0xff == rc & 0xff { code = ext }
            throw StorageError(code: code, message: message, sql: sql)
        }
    }

    /// Runs one transaction-control statement without arguments (`BEGIN IMMEDIATE`, `COMMIT`,
    /// `SAVEPOINT x`, …) as a cached prepared statement: one `sqlite3_step` and a reset, no
    /// re-parse (https://sqlite.org/c3ref/prepare.html). The same outcome as `executeScript` for
    /// a single statement; errors come from the step (e.g. `SQLITE_BUSY` on `COMMIT`, which
    /// leaves the transaction open exactly as `sqlite3_exec` does).
    func executeControl(_ sql: String) throws {
        let statement: Statement
        if let cached = controlCache[sql] {
            statement = cached
        } else {
            statement = try compile(sql)
            if controlCache.count < Self.controlCacheCapacity { controlCache[sql] = statement }
        }
        let rc = sqlite3_step(statement.handle)
        if rc != SQLITE_DONE && rc != SQLITE_ROW {
            let error = StorageError.from(handle, rc, sql: sql)
            sqlite3_reset(statement.handle)
            throw error
        }
        sqlite3_reset(statement.handle)
    }

    /// A prepared statement for `sql`, reset and with cleared bindings. Statements are cached by
    /// their SQL text; if the cached one is currently being stepped (nested use of the same SQL),
    /// a fresh uncached statement is returned instead.
    public func prepare(_ sql: String) throws -> Statement {
        let statement = try cachedStatement(sql)
        statement.reset()
        statement.handedOut = true
        return statement
    }

    /// The cached statement for `sql` (or a fresh one, as `prepare` says) without `prepare`'s
    /// reset, for `withStatement`, whose every use ends in one: a cached statement is then already
    /// reset with its bindings cleared (one reset and one clear of 52 bindings fewer per
    /// interaction-state read). One `prepare` handed out may have been stepped: it is reset here.
    private func cachedStatement(_ sql: String) throws -> Statement {
        let key = StatementKey(sql)
        if let cached = cache[key] {
            if cached.inUse { return try compile(sql) }
            if cached.handedOut {
                cached.reset()
                cached.handedOut = false
            }
            return cached
        }
        let statement = try compile(sql)
        if cache.count >= max(configuration.statementCacheCapacity, 1) {
            cache = cache.filter { $0.value.inUse }
        }
        cache[key] = statement
        return statement
    }

    /// Statements executed through `run`/`rows`/`first`/`scalar*` since the connection opened: lets
    /// a test prove that a route answers with one query.
    public private(set) var statementsExecuted: Int = 0

    /// Number of statements currently cached (for tests and metrics).
    public var cachedStatementCount: Int { cache.count }

    /// Cached statements that stepped through a whole table since they were prepared
    /// (`SQLITE_STMTSTATUS_FULLSCAN_STEP`), with that step count: a query missing its index shows here.
    /// The counter also counts the rows read back from a subquery's result (a window function's,
    /// say), which no index can serve; those statements are kept only when their plan also scans
    /// a stored table (`scansStoredTable`).
    public func statementsWithFullTableScans() -> [(sql: String, steps: Int32)] {
        cache.values.compactMap { st in
            let steps = sqlite3_stmt_status(st.handle, Int32(SQLITE_STMTSTATUS_FULLSCAN_STEP), 0)
            return steps > 0 && scansStoredTable(st.sql) ? (st.sql, steps) : nil
        }
    }

    private func compile(_ sql: String) throws -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK else { throw StorageError.from(handle, rc, sql: sql) }
        guard let stmt else { throw StorageError.misuse("empty SQL statement", sql: sql) }
        return Statement(handle: stmt, sql: sql)
    }

    /// Runs `body` with `sql` prepared and bound; resets the statement afterwards so it holds
    /// no read snapshot or lock.
    private func withStatement<T>(_ sql: String, _ args: [SQLValue], _ body: (Statement) throws -> T) throws -> T {
        try withStatement(sql) { statement in
            try statement.bind(args)
            return try body(statement)
        }
    }

    /// Runs `body` with `sql` prepared (it binds the arguments itself); resets the statement
    /// afterwards, as above.
    private func withStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        statementsExecuted &+= 1
        let statement = try cachedStatement(sql)
        statement.inUse = true
        defer {
            statement.reset()
            statement.inUse = false
        }
        return try body(statement)
    }

    /// Executes one statement to completion and returns `changes` (rows inserted, updated or deleted).
    @discardableResult
    public func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        try withStatement(sql, args) { statement in
            while try statement.step() {}
            return changes
        }
    }

    /// Every row of the query, each mapped by `map` (which must not keep the `Row`).
    public func rows<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        try withStatement(sql, args) { statement in
            var result: [T] = []
            while try statement.step() {
                result.append(try map(statement.row))
            }
            return result
        }
    }

    /// Calls `body` for every row of the query (the `Row` is valid only during the call). Not
    /// generic and collecting nothing: a hot read that writes its rows straight into response
    /// bytes pays no generic metadata lookup and no array append per row.
    public func forEachRow(_ sql: String, _ args: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        try withStatement(sql, args) { statement in
            while try statement.step() { try body(statement.row) }
        }
    }

    /// `forEachRow` with the slices of `args.bytes` bound where they are (`SQLITE_STATIC`,
    /// https://sqlite.org/c3ref/bind_blob.html): no `String`, no copy. The buffer outlives the
    /// run, and the reset at its end clears the bindings before the caller can let it go.
    public func forEachRow(_ sql: String, _ args: SQLTextSlices, _ body: (Row) throws -> Void) throws {
        try withStatement(sql) { statement in
            try args.bytes.withUnsafeBufferPointer { buffer in
                try statement.bind(args, in: buffer)
                while try statement.step() { try body(statement.row) }
            }
        }
    }

    /// The first row mapped by `map`, or nil when the query returns no rows.
    public func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        try withStatement(sql, args) { statement in
            guard try statement.step() else { return nil }
            return try map(statement.row)
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

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// Rows changed by the most recent INSERT/UPDATE/DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }
    /// True while a transaction is open (https://sqlite.org/c3ref/get_autocommit.html).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: - Transactions

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` when `body` (or
    /// the commit) throws. Inside an open transaction (e.g. in a `Database.write` job) it nests
    /// as a `SAVEPOINT` instead, so it composes.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try executeControl("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try executeControl("COMMIT")
            return result
        } catch {
            if isInTransaction { try? executeControl("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` inside `SAVEPOINT` … `RELEASE`; on throw rolls back to the savepoint
    /// (https://sqlite.org/lang_savepoint.html) and rethrows. Outside a transaction a savepoint
    /// behaves like `BEGIN DEFERRED`.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        // One name per nesting depth (a released name is free to reuse at the same depth), so
        // the statement texts are constant and their prepared statements are reused.
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let sql = Self.savepointSQL(depth: savepointDepth)
        try executeControl(sql.begin)
        do {
            let result = try body()
            try executeControl(sql.release)
            return result
        } catch {
            // Some errors (SQLITE_FULL, IOERR, NOMEM, …) roll back the whole transaction, in which
            // case the savepoint no longer exists; ignore the resulting failure here.
            try? executeControl(sql.rollback)
            try? executeControl(sql.release)
            throw error
        }
    }

    private static let savepointSQLs: [(begin: String, release: String, rollback: String)] =
        (0..<8).map { ("SAVEPOINT ts_sp\($0)", "RELEASE ts_sp\($0)", "ROLLBACK TO ts_sp\($0)") }

    private static func savepointSQL(depth: Int) -> (begin: String, release: String, rollback: String) {
        if depth < savepointSQLs.count { return savepointSQLs[depth] }
        return ("SAVEPOINT ts_sp\(depth)", "RELEASE ts_sp\(depth)", "ROLLBACK TO ts_sp\(depth)")
    }
}
