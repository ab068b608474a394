import Foundation

/// Applies numbered SQL files (`NNNN_name.sql`) from a directory in numeric order, each in its
/// own transaction, recording them in
/// `schema_migrations(version INTEGER PRIMARY KEY, name TEXT, checksum TEXT, applied_at TEXT)`.
///
/// - An applied migration whose file changed → `MigrationError.checksumMismatch(file:)`.
/// - A failing migration is rolled back entirely → `MigrationError.failed(file:message:)`.
/// - Re-running applies nothing. Concurrent migrators (two processes) are safe: each migration
///   re-checks `schema_migrations` inside its `BEGIN IMMEDIATE` transaction.
/// - Migration files must not contain `BEGIN`/`COMMIT`. A file containing the line
///   `-- migrate:foreign_keys=off` runs with foreign keys disabled (for table rebuilds,
///   https://sqlite.org/lang_altertable.html#otheralter) and is checked with
///   `PRAGMA foreign_key_check` before it commits.
///
/// Each backend has its own set with its own numbering and the same checksum rules: SQLite's files
/// are `DIR/NNNN_*.sql`, PostgreSQL's `DIR/postgres/NNNN_*.sql` (`postgresSubdirectory`). The set
/// used is the one of the database being migrated (`Database.dialect`). On PostgreSQL the whole run
/// holds `pg_advisory_lock(advisoryLockKey)`, so several nodes starting at once apply each
/// migration exactly once (the others wait, then find it applied).
public struct Migrator: Sendable {
    /// The directory the migrations are read from; nil for embedded migrations.
    public let directory: String?
    private let embedded: [Migration]
    private let embeddedPostgres: [Migration]
    /// File name → checksums of earlier comment-only revisions (`Migration.earlierChecksums`).
    private let earlierChecksums: [String: Set<String>]

    public static let foreignKeysOffMarker = "-- migrate:foreign_keys=off"
    /// The subdirectory of a migrations directory holding the PostgreSQL set.
    public static let postgresSubdirectory = "postgres"
    /// The `pg_advisory_lock` key held while migrating PostgreSQL ("TSMIGRAT" in ASCII).
    public static let advisoryLockKey: Int64 = 0x5453_4D49_4752_4154

    /// `earlierChecksums`: file name → checksums of earlier texts of that file that differ in
    /// comments only, accepted as the same migration (a comment can be reworded without stopping
    /// every database that applied the old text).
    public init(directory: String, earlierChecksums: [String: Set<String>] = [:]) {
        self.directory = directory
        self.embedded = []
        self.embeddedPostgres = []
        self.earlierChecksums = earlierChecksums
    }

    /// Migrations compiled into the executable: (file name `NNNN_name.sql`, exact contents), for
    /// SQLite and for PostgreSQL. The checksum is that of the contents, as for a file, so a database
    /// migrated from the files and one migrated from the binary agree.
    public init(embedded files: [(fileName: String, sql: String)], postgres: [(fileName: String, sql: String)] = [],
                earlierChecksums: [String: Set<String>] = [:]) throws {
        self.directory = nil
        self.embedded = try Self.parseEmbedded(files)
        self.embeddedPostgres = try Self.parseEmbedded(postgres)
        self.earlierChecksums = earlierChecksums
    }

    private static func parseEmbedded(_ files: [(fileName: String, sql: String)]) throws -> [Migration] {
        var result: [Migration] = []
        for (fileName, sql) in files {
            guard let (version, name) = Migration.parseFileName(fileName) else {
                throw MigrationError.invalidFileName(file: fileName)
            }
            result.append(Migration(version: version, name: name, fileName: fileName, path: "(embedded)/" + fileName,
                                    checksum: SHA256Digest.hexDigest(Array(sql.utf8)), sql: sql))
        }
        result.sort { $0.version < $1.version }
        for (a, b) in zip(result, result.dropFirst()) where a.version == b.version {
            throw MigrationError.duplicateVersion(version: a.version, files: [a.fileName, b.fileName])
        }
        return result
    }

    /// The SQLite migrations, sorted by version (`migrations(for: .sqlite)`).
    public func migrations() throws -> [Migration] { try migrations(for: .sqlite) }

    /// The migrations of `dialect`, sorted by version: the embedded ones, or the files in
    /// `directory` (PostgreSQL: `directory/postgres`); files not ending in `.sql`, and hidden files,
    /// are ignored.
    public func migrations(for dialect: SQLDialect) throws -> [Migration] {
        try migrationFiles(for: dialect).map { migration in
            var m = migration
            m.earlierChecksums = earlierChecksums[(dialect == .postgres ? Self.postgresSubdirectory + "/" : "") + m.fileName] ?? []
            return m
        }
    }

    private func migrationFiles(for dialect: SQLDialect) throws -> [Migration] {
        guard let base = directory else { return dialect == .postgres ? embeddedPostgres : embedded }
        let directory = dialect == .postgres ? (base as NSString).appendingPathComponent(Self.postgresSubdirectory) : base
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
              let names = try? fm.contentsOfDirectory(atPath: directory) else {
            throw MigrationError.directoryNotFound(directory)
        }
        var result: [Migration] = []
        for fileName in names.sorted() where fileName.hasSuffix(".sql") && !fileName.hasPrefix(".") {
            guard let (version, name) = Migration.parseFileName(fileName) else {
                throw MigrationError.invalidFileName(file: fileName)
            }
            let path = (directory as NSString).appendingPathComponent(fileName)
            guard let data = fm.contents(atPath: path) else {
                throw MigrationError.unreadable(file: fileName, message: "no such file or permission denied")
            }
            let bytes = [UInt8](data)
            guard let sql = String(validating: bytes, as: UTF8.self) else {
                throw MigrationError.unreadable(file: fileName, message: "not valid UTF-8")
            }
            result.append(Migration(version: version, name: name, fileName: fileName, path: path,
                                    checksum: SHA256Digest.hexDigest(bytes), sql: sql))
        }
        result.sort { $0.version < $1.version }
        for (a, b) in zip(result, result.dropFirst()) where a.version == b.version {
            throw MigrationError.duplicateVersion(version: a.version, files: [a.fileName, b.fileName])
        }
        return result
    }

    /// Migrations not yet applied to `db`, in order. Throws `checksumMismatch` if an applied
    /// migration's file changed.
    public func pending(in db: Database) throws -> [Migration] {
        let all = try migrations(for: db.dialect)
        let applied = try db.readSync { try Migrator.appliedChecksums($0) }
        return try Migrator.unapplied(all, applied: applied)
    }

    /// Applies every pending migration, each in its own transaction; returns those applied.
    @discardableResult
    public func migrate(_ db: Database) throws -> [Migration] {
        let all = try migrations(for: db.dialect)
        if db.dialect == .postgres {
            // One migrator at a time across every node (session-level advisory lock on the writer
            // connection; the writer's lock keeps the connection ours until it is released).
            return try db.withWriterConnection { connection in
                _ = try connection.scalarInt("SELECT 1 FROM pg_advisory_lock(?)", [.int(Self.advisoryLockKey)])
                defer { _ = try? connection.scalarInt("SELECT 1 FROM pg_advisory_unlock(?)", [.int(Self.advisoryLockKey)]) }
                try Migrator.createTable(connection)
                let applied = try Migrator.appliedChecksums(connection)
                var done: [Migration] = []
                for migration in try Migrator.unapplied(all, applied: applied) {
                    if try Migrator.apply(migration, on: connection, of: db) { done.append(migration) }
                }
                return done
            }
        }
        try db.writeSync { try Migrator.createTable($0) }
        let applied = try db.readSync { try Migrator.appliedChecksums($0) }
        var done: [Migration] = []
        for migration in try Migrator.unapplied(all, applied: applied) {
            if try db.withWriterConnection({ try Migrator.apply(migration, on: $0, of: db) }) { done.append(migration) }
        }
        return done
    }

    /// Versions and checksums recorded in `schema_migrations` (empty if the table does not exist).
    public static func appliedChecksums(_ connection: SQLConnection) throws -> [Int: String] {
        let exists = try connection.scalarInt(connection.statements.countTables(named: "schema_migrations")) ?? 0
        guard exists > 0 else { return [:] }
        var result: [Int: String] = [:]
        for (version, checksum) in try connection.rows("SELECT version, checksum FROM schema_migrations", [], {
            (Int($0.int(0)), $0.string(1))
        }) {
            result[version] = checksum
        }
        return result
    }

    // MARK: - Internals

    static func createTable(_ connection: SQLConnection) throws {
        try connection.executeScript("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT NOT NULL,
                checksum   TEXT NOT NULL,
                applied_at TEXT NOT NULL
            )
            """)
    }

    static func unapplied(_ all: [Migration], applied: [Int: String]) throws -> [Migration] {
        for migration in all {
            if let recorded = applied[migration.version], !migration.matches(recordedChecksum: recorded) {
                throw MigrationError.checksumMismatch(file: migration.fileName)
            }
        }
        return all.filter { applied[$0.version] == nil }
    }

    /// Applies one migration in its own `BEGIN IMMEDIATE` transaction. Returns false if another
    /// process applied it first.
    /// `connection` is `db`'s writer connection, already held by the caller (the writer's lock is
    /// not recursive, so this never takes it again).
    static func apply(_ migration: Migration, on connection: SQLConnection, of db: Database) throws -> Bool {
        let foreignKeysOff = db.dialect == .sqlite && migration.sql.contains(foreignKeysOffMarker)
        let now = db.dialect.statements.nowISO8601
        do {
            do {  // the scope of the foreign_keys toggle: restored before an error is translated below
                // PRAGMA foreign_keys is a no-op inside a transaction, so toggle it outside.
                if foreignKeysOff { try connection.executeScript("PRAGMA foreign_keys = OFF") }
                defer {
                    if foreignKeysOff {
                        try? connection.executeScript("PRAGMA foreign_keys = \(db.configuration.foreignKeys ? "ON" : "OFF")")
                    }
                }
                return try connection.transaction {
                    if let recorded = try connection.scalarString(
                        "SELECT checksum FROM schema_migrations WHERE version = ?", [.int(Int64(migration.version))]) {
                        guard migration.matches(recordedChecksum: recorded) else { throw MigrationError.checksumMismatch(file: migration.fileName) }
                        return false
                    }
                    try connection.executeScript(migration.sql)
                    if foreignKeysOff {
                        let violations = try connection.rows("PRAGMA foreign_key_check") { "\($0.string(0)) rowid \($0.int(1))" }
                        if !violations.isEmpty {
                            throw StorageError(code: StorageError.constraintForeignKey, message: "foreign key violations after migration: \(violations.prefix(5).joined(separator: ", "))")
                        }
                    }
                    try connection.run(
                        "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, \(now))",
                        [.int(Int64(migration.version)), .text(migration.name), .text(migration.checksum)])
                    return true
                }
            }
        } catch let error as MigrationError {
            throw error
        } catch let error as StorageError {
            throw MigrationError.failed(file: migration.fileName, message: error.message)
        } catch {
            throw MigrationError.failed(file: migration.fileName, message: "\(error)")
        }
    }

    // MARK: - Locating the directory

    /// The migrations directory to use, or nil if none is found. Checked in order:
    /// 1. `explicit` (a `--migrations` option): used if it is a directory, else nil — an explicit
    ///    path that does not exist is an error for the caller to report, not a cue to guess;
    /// 2. `$TOUCHSYNC_MIGRATIONS_DIR`;
    /// 3. `./Migrations` (the current directory: running from the package root);
    /// 4. relative to the executable's directory: `Migrations`, `../share/touchsync/Migrations`
    ///    (installed layout), `../../Migrations` and `../../../Migrations` (SwiftPM's
    ///    `.build/<triple>/<config>/` inside the package).
    public static func locateMigrationsDirectory(explicit: String?,
                                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit {
            return isDirectory(explicit) ? explicit : nil
        }
        var candidates: [String] = []
        if let env = environment["TOUCHSYNC_MIGRATIONS_DIR"], !env.isEmpty { candidates.append(env) }
        candidates.append(FileManager.default.currentDirectoryPath + "/Migrations")
        if let exeDir = executableDirectory() {
            for relative in ["Migrations", "../share/touchsync/Migrations", "../../Migrations", "../../../Migrations"] {
                candidates.append(exeDir + "/" + relative)
            }
        }
        for candidate in candidates where isDirectory(candidate) {
            return (candidate as NSString).standardizingPath
        }
        return nil
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }

    static func executableDirectory() -> String? {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? Bundle.main.executablePath
            ?? CommandLine.arguments.first
        guard let exe, !exe.isEmpty else { return nil }
        return ((exe as NSString).resolvingSymlinksInPath as NSString).deletingLastPathComponent
    }
}
