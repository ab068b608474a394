import CSQLite

extension SQLiteConnection {
    /// True when `sql`'s plan (`EXPLAIN QUERY PLAN`, https://sqlite.org/eqp.html) reads a whole
    /// stored table or index: a `SCAN x` line whose `x` is not a subquery or CTE the same plan
    /// builds (`MATERIALIZE x`, `CO-ROUTINE x`, `(subquery-N)`). Unknown plans count as scans.
    /// The plan is prepared outside the statement cache, so asking does not change what it holds.
    func scansStoredTable(_ sql: String) -> Bool {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "EXPLAIN QUERY PLAN " + sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { return true }
        defer { sqlite3_finalize(stmt) }
        var built: Set<Substring> = []
        var scanned: [Substring] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            guard let text = sqlite3_column_text(stmt, 3) else { continue }
            let detail = String(cString: text)
            let words = detail.split(separator: " ")
            guard let verb = words.first, words.count > 1 else { continue }
            // SQLite before 3.36 wrote "SCAN TABLE x" and "SCAN SUBQUERY n".
            let name = words[1] == "TABLE" && words.count > 2 ? words[2] : words[1]
            switch verb {
            case "MATERIALIZE", "CO-ROUTINE": built.insert(name)
            case "SCAN" where name != "CONSTANT" && !name.hasPrefix("(subquery-") && name != "SUBQUERY": scanned.append(name)
            default: break
            }
        }
        return scanned.contains { !built.contains($0) }
    }
}
