import Foundation

/// The schema of a SQLite database as `sqlite_master` records it (tables, indexes, triggers,
/// views), and the schema a list of migrations makes, so a file can be checked against what
/// TouchSync itself would have built (`touchsync restore`): an added trigger on `users` or an
/// extra table runs with the server's rights once the file is in place.
public enum SQLiteSchema {
    /// One schema object. `sql` is its `CREATE` statement with comments dropped and runs of
    /// white space folded to one space (outside quotes), so a migration whose comments were
    /// reworded still matches (`EmbeddedMigrations.earlierChecksums`).
    public struct Object: Hashable, Sendable, CustomStringConvertible {
        public let type: String
        public let name: String
        public let table: String
        public let sql: String

        public var description: String {
            type == "table" || type == "view" || table == name ? "\(type) \(name)" : "\(type) \(name) on \(table)"
        }
    }

    /// The objects recorded in the database file at `path`. SQLite's own objects (`sqlite_*`:
    /// automatic indexes, `sqlite_sequence`, `sqlite_stat1`) are left out: no statement can
    /// create one under that name, SQLite makes them from the tables compared here.
    public static func objects(at path: String) throws -> [Object] {
        try SQLiteBackup.schemaRows(at: path).compactMap(object)
    }

    /// The objects `migrations` make, applied in order to an empty in-memory database.
    public static func objects(madeBy migrations: [Migration]) throws -> [Object] {
        let db = try Database(path: ":memory:")
        defer { db.close() }
        try db.writeSync { try Migrator.createTable($0) }
        for migration in migrations {
            _ = try db.withWriterConnection { try Migrator.apply(migration, on: $0, of: db) }
        }
        let rows = try db.withWriterConnection { c in
            try c.rows("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master") { [$0.string(0), $0.string(1), $0.string(2), $0.string(3)] }
        }
        return rows.compactMap(object)
    }

    /// What differs between `expected` (the migrations' schema) and `actual` (a file's), one
    /// phrase per object, in a stable order; empty when they are the same.
    public static func differences(expected: [Object], actual: [Object]) -> [String] {
        func key(_ o: Object) -> String { "\(o.type) \(o.name)" }
        let want = Dictionary(expected.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        let have = Dictionary(actual.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        var out: [String] = []
        for k in have.keys.sorted() {
            guard let a = have[k] else { continue }
            if let w = want[k] {
                if w.sql != a.sql || w.table != a.table { out.append("\(a) differs from what the migrations make") }
            } else {
                out.append("\(a) is not made by any migration")
            }
        }
        for k in want.keys.sorted() where have[k] == nil {
            if let w = want[k] { out.append("\(w) is missing") }
        }
        return out
    }

    private static func object(_ row: [String]) -> Object? {
        guard row.count == 4, !row[1].lowercased().hasPrefix("sqlite_") else { return nil }
        return Object(type: row[0], name: row[1], table: row[2], sql: normalized(row[3]))
    }

    /// `sql` without comments, with white space outside quotes folded to one space.
    static func normalized(_ sql: String) -> String {
        let s = Array(sql.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var pendingSpace = false
        func emit(_ c: Unicode.Scalar) {
            if pendingSpace && !out.isEmpty { out.append(" ") }
            pendingSpace = false
            out.append(c)
        }
        while i < s.count {
            let c = s[i]
            if c == "-" && i + 1 < s.count && s[i + 1] == "-" {
                while i < s.count && s[i] != "\n" { i += 1 }
                pendingSpace = true
            } else if c == "/" && i + 1 < s.count && s[i + 1] == "*" {
                i += 2
                while i + 1 < s.count && !(s[i] == "*" && s[i + 1] == "/") { i += 1 }
                i += 2
                pendingSpace = true
            } else if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                emit(c)
                i += 1
                while i < s.count {
                    out.append(s[i])
                    if s[i] == close {
                        // A doubled quote is a quote inside the literal.
                        if close != "]" && i + 1 < s.count && s[i + 1] == close { out.append(s[i + 1]); i += 2; continue }
                        break
                    }
                    i += 1
                }
                i += 1
            } else if c.properties.isWhitespace {
                pendingSpace = true
                i += 1
            } else {
                emit(c)
                i += 1
            }
        }
        return String(out)
    }
}
