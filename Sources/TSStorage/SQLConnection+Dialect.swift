/// The statements that differ between dialects, asked for by what they do; each dialect's text
/// is in its `SQLDialectStatements` conformance.
extension SQLConnection {
    /// The first row of `query`, whose rows stay locked until the transaction ends where the
    /// dialect locks rows (see `LockingSelect`).
    public func first<T>(_ query: LockingSelect, _ args: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        try first(statements.sql(query), args, map)
    }

    /// Runs `change` and maps the row it changed, nil when it changed none (see `ChangeReturning`).
    public func run<T>(_ change: ChangeReturning, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T? {
        try statements.run(change, on: self, args, map)
    }

    /// Orders this transaction after every other one that takes `key`, across processes, until
    /// it ends (PostgreSQL: a transaction-scoped advisory lock; SQLite's single writer already
    /// orders every write transaction, so there it runs nothing).
    public func lockUntilTransactionEnds(key: Int64) throws {
        try statements.lockUntilTransactionEnds(key: key, on: self)
    }

    /// The schema's tables, ordered by name, each with the tables its foreign keys reference.
    public func schemaTables() throws -> [SchemaTable] { try statements.tables(on: self) }
}
