/// PostgreSQL's way: row locks (`FOR UPDATE`), `RETURNING`, transaction-scoped advisory locks,
/// and the `pg_class`/`pg_constraint` catalogs. Plain SQL text: nothing here needs libpq.
struct PostgresStatements: SQLDialectStatements {
    /// https://www.postgresql.org/docs/15/sql-select.html#SQL-FOR-UPDATE-SHARE
    static func forUpdate(_ select: String, of alias: String?) -> String {
        alias.map { "\(select) FOR UPDATE OF \($0)" } ?? "\(select) FOR UPDATE"
    }

    func sql(_ query: LockingSelect) -> String { query.forUpdate }

    func run<T>(_ change: ChangeReturning, on c: SQLConnection, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T? {
        try c.first(change.returning, args, map)
    }

    /// `pg_advisory_xact_lock`: released at COMMIT or ROLLBACK, after the commit is visible
    /// (https://www.postgresql.org/docs/15/functions-admin.html#FUNCTIONS-ADVISORY-LOCKS).
    func lockUntilTransactionEnds(key: Int64, on c: SQLConnection) throws {
        _ = try c.first("SELECT pg_advisory_xact_lock(\(key))") { _ in 0 }
    }

    /// The ordinary and partitioned tables of the current schema, and every foreign key between them.
    func tables(on c: SQLConnection) throws -> [SchemaTable] {
        let names = try c.rows("""
            SELECT c.relname::text FROM pg_class c WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
            ORDER BY 1
            """) { $0.string(0) }
        var references: [String: [String]] = [:]
        for (child, parent) in try c.rows("""
            SELECT ch.relname::text, pa.relname::text FROM pg_constraint k
            JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
            WHERE k.contype = 'f' AND ch.relnamespace = current_schema()::regnamespace
            """, [], { ($0.string(0), $0.string(1)) }) {
            references[child, default: []].append(parent)
        }
        return names.map { SchemaTable(name: $0, references: references[$0] ?? []) }
    }

    /// https://www.postgresql.org/docs/15/transaction-iso.html#XACT-REPEATABLE-READ: one
    /// consistent view for every statement of the read.
    var beginReadSnapshot: String { "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" }

    func countTables(named name: String) -> String {
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '\(name)'"
    }

    var nowISO8601: String { "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')" }
}
