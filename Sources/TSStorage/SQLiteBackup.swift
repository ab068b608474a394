import CSQLite
import Foundation
import TSSync

/// Consistent copies of a SQLite database that another process (or this one) keeps writing, and
/// the checks a copy must pass before it is trusted.
///
/// The copy uses SQLite's online backup API (https://sqlite.org/backup.html) on connections of its
/// own: one `sqlite3_backup_step(-1)` copies every page inside a single read transaction of the
/// source, so the copy is the database as of one commit. In WAL mode that read transaction never
/// blocks the writer, and every transaction committed before the copy started is in it. A plain
/// file copy would not be: committed pages may still be in the `-wal` file, and a copy taken while
/// a checkpoint runs can mix two states.
public enum SQLiteBackup {
    /// What a copy wrote.
    public struct Copy: Sendable, Equatable {
        public let path: String
        public let bytes: Int64
        public let pages: Int64
    }

    /// A copy or a check that failed, with the reason in words.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Copies the database at `source` to `destination` (replaced atomically: the copy is written
    /// to a temporary file beside it, synced, then renamed), in rollback-journal mode so the copy is
    /// one self-contained file. The file gets `mode` (by default readable by its owner only: a
    /// backup holds password hashes). Does not check the copy: call `integrityProblems` on it.
    public static func copy(from source: String, to destination: String, mode: mode_t = 0o600) throws -> Copy {
        guard FileManager.default.fileExists(atPath: source) else { throw Failure("no database at \(source)") }
        let partial = destination + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        unlink(partial)
        // Created here with its mode; SQLite then opens the existing (empty) file and keeps it.
        let created = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard created >= 0 else { throw Failure("cannot create \(partial): \(String(cString: strerror(errno)))") }
        _ = fchmod(created, mode)  // whatever the umask
        close(created)
        let src: OpaquePointer
        do { src = try openDatabase(source, flags: SQLITE_OPEN_READONLY) } catch {
            unlink(partial)
            throw error
        }
        defer { sqlite3_close_v2(src) }
        let dst = try openDatabase(partial, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var pages: Int64 = 0
        do {
            guard let backup = sqlite3_backup_init(dst, "main", src, "main") else {
                throw Failure("cannot start the backup: \(String(cString: sqlite3_errmsg(dst)))")
            }
            // -1: every page in one step, one read transaction of the source. BUSY/LOCKED only when
            // the source is mid-checkpoint in rollback mode; bounded retries then.
            var rc = sqlite3_backup_step(backup, -1)
            var attempts = 0
            while (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempts < 100 {
                attempts += 1
                sqlite3_sleep(50)
                rc = sqlite3_backup_step(backup, -1)
            }
            pages = Int64(sqlite3_backup_pagecount(backup))
            let finish = sqlite3_backup_finish(backup)
            guard rc == SQLITE_DONE, finish == SQLITE_OK else {
                throw Failure("backup of \(source) failed: \(String(cString: sqlite3_errstr(rc == SQLITE_DONE ? finish : rc)))")
            }
            // The pages carry the source's WAL flag; a backup file is easier to move as one file.
            try exec(dst, "PRAGMA journal_mode = DELETE")
        } catch {
            sqlite3_close_v2(dst)
            unlink(partial)
            throw error
        }
        sqlite3_close_v2(dst)
        try syncFile(partial)
        guard rename(partial, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw Failure("cannot move the backup into \(destination): \(reason)")
        }
        syncDirectory(of: destination)
        let size = (try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? NSNumber)?.int64Value ?? 0
        return Copy(path: destination, bytes: size, pages: pages)
    }

    /// `PRAGMA integrity_check` of the database at `path`: empty when it answers `ok`, else its
    /// messages (at most 20). Throws when the file cannot be opened as a database at all.
    public static func integrityProblems(at path: String) throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { throw Failure("no file at \(path)") }
        let db = try openDatabase(path, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(db) }
        let rows = try query(db, "PRAGMA integrity_check(20)")
        return rows == ["ok"] ? [] : rows
    }

    /// The migrations recorded in the database at `path` (`schema_migrations`): version → checksum.
    /// Empty when the table does not exist.
    public static func appliedMigrations(at path: String) throws -> [Int: String] {
        let db = try openDatabase(path, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(db) }
        guard try query(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").count == 1 else { return [:] }
        var result: [Int: String] = [:]
        for line in try query(db, "SELECT version || ' ' || checksum FROM schema_migrations") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2, let v = Int(parts[0]) { result[v] = String(parts[1]) }
        }
        return result
    }

    /// Every row of `sqlite_master` of the database at `path`: type, name, table, sql ("" when none).
    static func schemaRows(at path: String) throws -> [[String]] {
        let db = try openDatabase(path, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(db) }
        // One text column per row (the helper's shape), fields split on a unit separator, which no
        // identifier or statement of ours contains.
        return try query(db, "SELECT type || char(31) || name || char(31) || tbl_name || char(31) || coalesce(sql, '') FROM sqlite_master")
            .map { $0.split(separator: "\u{1F}", maxSplits: 3, omittingEmptySubsequences: false).map(String.init) }
    }

    /// Folds the WAL of the database at `path` into the main file and closes it, so the file alone
    /// holds every commit (no `-wal` is left: the last connection to close removes it).
    public static func checkpointAndClose(_ path: String) throws {
        let db = try openDatabase(path, flags: SQLITE_OPEN_READWRITE)
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 5000)
        _ = try query(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: - Helpers

    private static func openDatabase(_ path: String, flags: Int32) throws -> OpaquePointer {
        _ = SQLiteConnection.processSettings  // before SQLite initialises, whichever opens first
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw Failure("cannot open \(path) as a SQLite database: \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        return db
    }

    private static func exec(_ db: OpaquePointer, _ sql: String) throws {
        _ = try query(db, sql)
    }

    /// Column 0 of every row, as text.
    private static func query(_ db: OpaquePointer, _ sql: String) throws -> [String] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else {
            throw Failure("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(stmt) }
        var rows: [String] = []
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return rows }
            guard rc == SQLITE_ROW else { throw Failure("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
            rows.append(sqlite3_column_text(stmt, 0).map { String(cString: $0) } ?? "")
        }
    }

    private static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Failure("cannot open \(path) to sync it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure("fsync of \(path) failed: \(String(cString: strerror(errno)))") }
    }

    /// Makes a rename in the directory durable (best effort: not every file system allows it).
    static func syncDirectory(of path: String) {
        let dir = (path as NSString).deletingLastPathComponent
        let fd = open(dir.isEmpty ? "." : dir, O_RDONLY)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
