import Foundation
import TSStorage

/// `touchsync backup` and `touchsync restore` for the SQLite database (docs/backup.md). PostgreSQL
/// has its own tools; `postgresAdvice` names them with the configured server filled in.
public enum DatabaseBackup {
    /// A refusal or failure, in words for the operator.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What `backup` wrote.
    public struct BackupReport: Sendable {
        public let copy: SQLiteBackup.Copy
        public let source: String
        public var text: String {
            "wrote \(copy.path): \(copy.bytes) bytes, \(copy.pages) pages, a consistent copy of \(source); integrity_check ok"
        }
    }

    /// What `restore` did.
    public struct RestoreReport: Sendable {
        public let databasePath: String
        public let source: String
        /// Where the database that was replaced now is; nil when there was none.
        public let previous: String?
        public let migrations: Int
        public var text: String {
            "restored \(databasePath) from \(source) (\(migrations) migrations, integrity_check ok)"
                + (previous.map { "; the previous database is kept as \($0)" } ?? "")
        }
    }

    /// Copies the database at `databasePath` to `destination` (a directory gets a timestamped file
    /// in it) while servers keep using it, then checks the copy.
    public static func backup(databasePath: String, to destination: String, now: Date = Date()) throws -> BackupReport {
        guard databasePath != ":memory:" else { throw Failure("database.path is :memory:, which has nothing to back up") }
        var target = destination
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory), isDirectory.boolValue {
            target = (destination as NSString).appendingPathComponent(fileName(at: now))
        }
        guard standardized(target) != standardized(databasePath) else {
            throw Failure("the backup file \(target) is the database itself; name another file")
        }
        let copy: SQLiteBackup.Copy
        do { copy = try SQLiteBackup.copy(from: databasePath, to: target) } catch { throw Failure("\(error)") }
        let problems = try integrity(copy.path)
        guard problems.isEmpty else {
            throw Failure("the copy \(copy.path) fails PRAGMA integrity_check: \(problems.joined(separator: "; "))")
        }
        return BackupReport(copy: copy, source: databasePath)
    }

    /// Replaces the database at `databasePath` with the backup `source`, refusing while any
    /// process has the database open (`DatabaseLock`, naming its pid), when the backup's migrations
    /// are not the ones this binary was built with (`migrator`), when its schema is not exactly
    /// what those migrations make (`checkSchema`), or when it fails `PRAGMA integrity_check`. The replaced database is kept beside it as
    /// `<database>.before-restore-<UTC time>`; the swap itself is one `rename(2)`.
    public static func restore(from source: String, databasePath: String, migrator: Migrator, now: Date = Date()) throws -> RestoreReport {
        guard databasePath != ":memory:" else { throw Failure("database.path is :memory:; name the database file to restore into") }
        guard FileManager.default.fileExists(atPath: source) else { throw Failure("no backup file at \(source)") }
        guard standardized(source) != standardized(databasePath) else { throw Failure("\(source) is the database itself") }
        let lock: DatabaseLock
        do { lock = try DatabaseLock.exclusive(databasePath: databasePath) } catch { throw Failure("cannot restore: \(error)") }
        defer { lock.release() }

        let problems = try integrity(source)
        guard problems.isEmpty else { throw Failure("\(source) fails PRAGMA integrity_check: \(problems.joined(separator: "; "))") }
        let migrations = try checkMigrations(of: source, against: migrator)
        try checkSchema(of: source, against: migrator)

        // The backup goes to a staging file beside the database (same file system: the swap is
        // a rename), copied with the backup API so a backup in WAL mode arrives whole.
        // The restored file gets the current database's owner and mode, so the server that opened
        // the old one (often another user than the one restoring) opens the new one.
        let staging = databasePath + ".restoring"
        let old = try? FileManager.default.attributesOfItem(atPath: databasePath)
        let mode = (old?[.posixPermissions] as? NSNumber).map { mode_t($0.uint16Value & 0o777) } ?? 0o600
        do { _ = try SQLiteBackup.copy(from: source, to: staging, mode: mode) } catch { throw Failure("\(error)") }
        if let uid = (old?[.ownerAccountID] as? NSNumber)?.uint32Value, let gid = (old?[.groupOwnerAccountID] as? NSNumber)?.uint32Value,
           chown(staging, uid_t(uid), gid_t(gid)) != 0, geteuid() == 0 {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            throw Failure("cannot give the restored database the owner of \(databasePath): \(reason)")
        }
        var previous: String?
        let fm = FileManager.default
        if fm.fileExists(atPath: databasePath) {
            // Nobody else has it open (we hold the lock): fold its WAL in, so the file alone is the
            // old database, and keep it under its new name (a hard link: the database path never
            // goes missing).
            do { try SQLiteBackup.checkpointAndClose(databasePath) } catch {
                unlink(staging)
                throw Failure("cannot checkpoint the current database before replacing it: \(error)")
            }
            let wal = databasePath + "-wal"
            if let size = (try? fm.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.int64Value, size > 0 {
                unlink(staging)
                throw Failure("\(wal) still holds \(size) bytes after a checkpoint; is a process without the lock using the database?")
            }
            let kept = databasePath + ".before-restore-" + stamp(now)
            if link(databasePath, kept) != 0 {
                do { _ = try SQLiteBackup.copy(from: databasePath, to: kept) } catch {
                    unlink(staging)
                    throw Failure("cannot keep the current database as \(kept): \(error)")
                }
            }
            previous = kept
        }
        // A -wal or -shm left from the old database must not be read as the new one's.
        unlink(databasePath + "-wal")
        unlink(databasePath + "-shm")
        guard rename(staging, databasePath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            throw Failure("cannot move the restored database into place: \(reason)")
        }
        let dir = (databasePath as NSString).deletingLastPathComponent
        let fd = open(dir.isEmpty ? "." : dir, O_RDONLY)
        if fd >= 0 { _ = fsync(fd); close(fd) }
        return RestoreReport(databasePath: databasePath, source: source, previous: previous, migrations: migrations)
    }

    /// The backup's recorded migrations must each be one this binary has, with the same checksum
    /// (a backup from a newer version, or from a changed schema, is refused). Older backups are
    /// fine: the server applies the missing migrations when it starts. Returns how many it has.
    static func checkMigrations(of path: String, against migrator: Migrator) throws -> Int {
        let applied: [Int: String]
        do { applied = try SQLiteBackup.appliedMigrations(at: path) } catch { throw Failure("\(error)") }
        guard !applied.isEmpty else { throw Failure("\(path) is not a TouchSync database: it has no schema_migrations table") }
        let known = Dictionary(uniqueKeysWithValues: try migrator.migrations(for: .sqlite).map { ($0.version, $0) })
        for (version, checksum) in applied.sorted(by: { $0.key < $1.key }) {
            guard let migration = known[version] else {
                throw Failure("\(path) has migration \(version), which this touchsync does not know: it comes from a newer version; restore it with that version")
            }
            guard migration.matches(recordedChecksum: checksum) else {
                throw Failure("\(path) recorded migration \(migration.fileName) with checksum \(checksum.prefix(12))…, this touchsync has \(migration.checksum.prefix(12))…: the schemas differ")
            }
        }
        return applied.count
    }

    /// The backup's whole schema (every table, index, trigger and view in `sqlite_master`) must be
    /// what its recorded migrations make on an empty database: a file with one more table, a
    /// trigger on `users` or a changed index is not a TouchSync backup, and a trigger would run with
    /// the server's rights on every write once it is in place. Names each difference.
    static func checkSchema(of path: String, against migrator: Migrator) throws {
        let applied: [Int: String]
        let expected: [SQLiteSchema.Object]
        let actual: [SQLiteSchema.Object]
        do {
            applied = try SQLiteBackup.appliedMigrations(at: path)
            let migrations = try migrator.migrations(for: .sqlite).filter { applied[$0.version] != nil }
            expected = try SQLiteSchema.objects(madeBy: migrations)
            actual = try SQLiteSchema.objects(at: path)
        } catch {
            throw Failure("cannot compare the schema of \(path) with what its migrations make: \(error)")
        }
        let differences = SQLiteSchema.differences(expected: expected, actual: actual)
        guard differences.isEmpty else {
            throw Failure("\(path) is not what its \(applied.count) migrations make, so it is not restored: "
                          + differences.joined(separator: "; ")
                          + " (a TouchSync backup's schema is exactly its migrations'; docs/backup.md, \"What restore checks\")")
        }
    }

    private static func integrity(_ path: String) throws -> [String] {
        do { return try SQLiteBackup.integrityProblems(at: path) } catch { throw Failure("\(path) cannot be checked: \(error)") }
    }

    /// `pg_dump` / `pg_restore` command lines for the database of `url` (its password left out:
    /// PGPASSWORD or ~/.pgpass supply it).
    public static func postgresAdvice(url: String, file: String, restore: Bool) -> String {
        let parts = URLComponents(string: url)
        var args: [String] = []
        if let host = parts?.host, !host.isEmpty { args.append("--host=\(host)") }
        if let port = parts?.port { args.append("--port=\(port)") }
        if let user = parts?.user, !user.isEmpty { args.append("--username=\(user)") }
        let path = parts?.path ?? ""
        let db = path.hasPrefix("/") ? String(path.dropFirst()) : path
        args.append("--dbname=\(db.isEmpty ? "postgres" : db)")
        let connection = args.joined(separator: " ")
        if restore {
            return "touchsync restore works on the SQLite database only; this node uses PostgreSQL (\(PostgresURL.redact(url))). "
                + "Stop the servers, then restore with:\n  pg_restore --clean --if-exists --no-owner \(connection) \(file)\n"
                + "(the password from PGPASSWORD or ~/.pgpass; see docs/backup.md)"
        }
        return "touchsync backup works on the SQLite database only; this node uses PostgreSQL (\(PostgresURL.redact(url))). "
            + "Back it up with:\n  pg_dump --format=custom --file=\(file) \(connection)\n"
            + "(the password from PGPASSWORD or ~/.pgpass; see docs/backup.md)"
    }

    /// `touchsync-<UTC time with milliseconds>.sqlite`: names sort in time order.
    static func fileName(at date: Date) -> String { "touchsync-\(stamp(date)).sqlite" }

    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        return formatter.string(from: date)
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
