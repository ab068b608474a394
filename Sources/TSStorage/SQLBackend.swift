/// One database engine under `SQLConnection`: SQLite (`SQLiteConnection+Backend.swift`) or
/// PostgreSQL (`PostgresConnection+Backend.swift`). `SQLConnection` forwards to it and never names
/// an engine, so the only place that knows which engines exist is the code that opens one
/// (`Database.init(path:)`, `Database.init(url:)`).
///
/// Class-bound: a call through `any SQLBackend` is one witness-table call, no allocation.
/// Like the connections it stands for, one thread at a time.
protocol SQLBackend: AnyObject {
    var dialect: SQLDialect { get }
    func close()
    func executeScript(_ sql: String) throws
    /// One transaction-control statement (`BEGIN …`, `COMMIT`, `ROLLBACK`).
    func executeControl(_ sql: String) throws
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int
    func rows<T>(_ sql: String, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> [T]
    func forEachRow(_ sql: String, _ args: [SQLValue], _ body: (Row) throws -> Void) throws
    /// `forEachRow` with arguments that are slices of one buffer (`SQLTextSlices`).
    func forEachRow(_ sql: String, _ args: SQLTextSlices, _ body: (Row) throws -> Void) throws
    func first<T>(_ sql: String, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T?
    var changes: Int { get }
    var isInTransaction: Bool { get }
    var cachedStatementCount: Int { get }
    func transaction<T>(_ body: () throws -> T) throws -> T
    func savepoint<T>(_ body: () throws -> T) throws -> T
    /// A statement the caller will run next with these arguments (`SQLConnection.prefetch`).
    func prefetch(_ sql: String, _ args: [SQLValue])
    func prefetch(_ sql: String, _ args: SQLTextSlices)
    /// Replaces a connection found broken (a server restart) with a fresh one; throws when that
    /// fails. Nothing on an engine whose connection cannot break (SQLite, in process).
    func reconnectIfBroken() throws
}

extension SQLBackend {
    /// In process (SQLite) there is no round trip to save: nothing to do.
    func prefetch(_ sql: String, _ args: [SQLValue]) {}

    /// A backend without a path of its own for slices runs them as one `SQLValue` each.
    func forEachRow(_ sql: String, _ args: SQLTextSlices, _ body: (Row) throws -> Void) throws {
        try forEachRow(sql, args.values, body)
    }

    func prefetch(_ sql: String, _ args: SQLTextSlices) { prefetch(sql, args.values) }

    func reconnectIfBroken() throws {}
}
