/// SQLite's way (https://sqlite.org/lang.html): one writer at a time, so no row or advisory
/// locks; the schema catalog is `sqlite_master` with `pragma_foreign_key_list`.
struct SQLiteStatements: SQLDialectStatements {
    func sql(_ query: LockingSelect) -> String { query.select }

    func run<T>(_ change: ChangeReturning, on c: SQLConnection, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T? {
        let whereArgs = change.setArgumentCount == 0 ? args : Array(args.dropFirst(change.setArgumentCount))
        switch change.kind {
        case .delete:
            guard let row = try c.first(change.read, whereArgs, map) else { return nil }
            try c.run(change.change, args)
            return row
        case .update:
            try c.run(change.change, args)
            return try c.first(change.read, whereArgs, map)
        }
    }

    /// The single writer already orders every write transaction, across the whole database.
    func lockUntilTransactionEnds(key: Int64, on c: SQLConnection) throws {}

    func tables(on c: SQLConnection) throws -> [SchemaTable] {
        let names = try c.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") { $0.string(0) }
        return try names.map { name in
            SchemaTable(name: name, references: try c.rows("SELECT \"table\" FROM pragma_foreign_key_list(?)", [.text(name)]) { $0.string(0) })
        }
    }

    /// WAL: the snapshot is taken at the first read and kept to the end.
    var beginReadSnapshot: String { "BEGIN DEFERRED" }

    func countTables(named name: String) -> String { "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(name)'" }

    var nowISO8601: String { "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')" }
}
