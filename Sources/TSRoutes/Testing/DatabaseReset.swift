import TSStorage

/// Empties every data table and keeps the schema (`POST /api/test/reset`).
///
/// One write transaction of `DELETE FROM t`, children before parents, so foreign keys (on, as
/// every connection sets them) never fire a cascade or a violation. The tables and their order come from the
/// live schema, so a new migration needs no change
/// here (SQLite: `sqlite_master` + `pragma_foreign_key_list`; PostgreSQL: `pg_class` +
/// `pg_constraint`). `schema_migrations` and the engine's own tables are kept.
public enum DatabaseReset {
    /// Tables that survive a reset.
    static let keptTables: Set<String> = ["schema_migrations"]

    /// Deletes all rows; returns the emptied tables in the order they were emptied.
    @discardableResult
    public static func run(_ db: Database) async throws -> [String] {
        try await db.write { c in
            let order = try deletionOrder(c)
            for table in order { try c.run("DELETE FROM \"\(table)\"") }
            return order
        }
    }

    /// Data tables ordered so that every table comes before the tables it references.
    static func deletionOrder(_ c: SQLConnection) throws -> [String] {
        var tables: [String] = []
        var parents: [String: Set<String>] = [:]
        switch c.dialect {
        case .sqlite:
            tables = try c.rows("""
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
                """) { $0.string(0) }.filter { !keptTables.contains($0) }
            for t in tables {
                let refs = try c.rows("SELECT \"table\" FROM pragma_foreign_key_list(?)", [.text(t)]) { $0.string(0) }
                parents[t] = Set(refs).subtracting([t])
            }
        case .postgres:
            // The ordinary tables of the current schema, and every foreign key between them (pg_constraint).
            tables = try c.rows("""
                SELECT c.relname::text FROM pg_class c WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
                ORDER BY 1
                """) { $0.string(0) }.filter { !keptTables.contains($0) }
            for t in tables { parents[t] = [] }
            for (child, parent) in try c.rows("""
                SELECT ch.relname::text, pa.relname::text FROM pg_constraint k
                JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
                WHERE k.contype = 'f' AND ch.relnamespace = current_schema()::regnamespace
                """, [], { ($0.string(0), $0.string(1)) }) where child != parent && parents[child] != nil {
                parents[child, default: []].insert(parent)
            }
        }
        // Depth-first: a table is emitted after every table that references it.
        var children: [String: [String]] = [:]
        for (child, ps) in parents { for p in ps { children[p, default: []].append(child) } }
        var out: [String] = []
        var done: Set<String> = []
        var visiting: Set<String> = []
        func visit(_ t: String) {
            if done.contains(t) || visiting.contains(t) { return }  // a cycle is broken arbitrarily
            visiting.insert(t)
            for child in (children[t] ?? []).sorted() { visit(child) }
            visiting.remove(t)
            done.insert(t)
            out.append(t)
        }
        for t in tables { visit(t) }
        return out
    }
}
