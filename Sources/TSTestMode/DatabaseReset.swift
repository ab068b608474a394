import TSRoutes
import TSStorage

/// Empties every data table and keeps the schema (`POST /api/test/reset`).
///
/// One write transaction of `DELETE FROM t`, children before parents, so foreign keys (on, as
/// every connection sets them) never fire a cascade or a violation. The tables and their order come from the
/// live schema (`SQLConnection.schemaTables`), so a new migration needs no change here.
/// `schema_migrations` and the engine's own tables are kept.
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
        var parents: [String: Set<String>] = [:]
        let tables = try c.schemaTables().filter { !keptTables.contains($0.name) }
        for t in tables { parents[t.name] = Set(t.references).subtracting([t.name]) }
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
        for t in tables { visit(t.name) }
        return out
    }
}
