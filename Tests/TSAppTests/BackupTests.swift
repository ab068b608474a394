import Foundation
import Logging
import TSApp
import TSJSON
import TSStorage
import TSTestSupport
import XCTest

/// `touchsync backup` / `restore` (DatabaseBackup) and scheduled backups (ScheduledBackups) against
/// live servers on SQLite files (docs/backup.md).
final class BackupTests: XCTestCase {
    var dir: String!

    override func setUp() async throws {
        if TestPostgresDatabase.requested {
            throw XCTSkip("backup and restore work on the SQLite file; a PostgreSQL server is backed up with pg_dump (docs/backup.md)")
        }
        dir = NSTemporaryDirectory() + "touchsync-backup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        if let dir { try? FileManager.default.removeItem(atPath: dir) }
    }

    var databasePath: String { dir + "/touchsync.sqlite" }

    func startServer(_ overrides: [String: JSONValue] = [:]) throws -> LiveServer {
        var o: [String: JSONValue] = ["database.path": .string(databasePath)]
        for (k, v) in overrides { o[k] = v }
        return try LiveServer(overrides: o)
    }

    func elementIds(in path: String) throws -> Set<String> {
        let c = try SQLiteConnection(path: path, readOnly: true, configuration: DatabaseConfiguration())
        defer { c.close() }
        return Set(try c.rows("SELECT id FROM elements", []) { $0.string(0) })
    }

    func noteId(_ api: APIClient, _ roomId: String, token: String) async throws -> String {
        try await api.post("/api/rooms/\(roomId)/elements", ["type": "note", "positionX": 1, "positionY": 1, "width": 1, "height": 1],
                           token: token).dataString("id")
    }

    /// REST creates keep coming while the backup runs: every create acknowledged before the backup
    /// started is in the copy, and the copy passes integrity_check.
    func testBackupDuringAcknowledgedWritesHoldsEveryEarlierWrite() async throws {
        let live = try startServer()
        let api = APIClient(base: live.base)
        let alice = try await api.register("alice")
        let room = try await api.post("/api/rooms", ["name": "r"], token: alice.token).dataString("id")
        let acknowledged = AcknowledgedIds()
        let writer = Task {
            while !acknowledged.stopped {
                let r = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 1, "positionY": 1, "width": 1, "height": 1],
                                           token: alice.token)
                guard r.status == 201, let id = r.json["data"]?["id"]?.stringValue else { break }
                acknowledged.add(id)
            }
        }
        await until(timeout: .seconds(20)) { acknowledged.count >= 30 }
        let before = acknowledged.snapshot
        XCTAssertGreaterThanOrEqual(before.count, 30)
        let target = dir + "/backup.sqlite"
        let report = try DatabaseBackup.backup(databasePath: databasePath, to: target)
        // The copy is one read transaction of the WAL database, which never blocks the writer: the
        // writes keep being acknowledged (how many land inside the copy's few milliseconds is timing).
        await until(timeout: .seconds(20)) { acknowledged.count > before.count }
        let after = acknowledged.count
        // A flag, not Task.cancel(): cancelling a task inside URLSession's data(for:) can deadlock
        // swift-corelibs-foundation's URLSessionTask.cancel (a DispatchQueue.sync on its own queue).
        acknowledged.stop()
        _ = try? await writer.value
        await live.stop()

        XCTAssertEqual(report.copy.path, target)
        XCTAssertGreaterThan(report.copy.bytes, 0)
        XCTAssertTrue(report.text.contains("integrity_check ok"), report.text)
        XCTAssertEqual(try SQLiteBackup.integrityProblems(at: target), [])
        let copied = try elementIds(in: target)
        XCTAssertTrue(before.isSubset(of: copied), "\(before.subtracting(copied).count) acknowledged writes missing from the backup")
        XCTAssertGreaterThan(after, before.count, "writes go on around the backup")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target + "-wal"), "the backup is one file")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? NSNumber).intValue
        XCTAssertEqual(mode & 0o077, 0, "a backup holds password hashes: its owner alone reads it (mode \(String(mode, radix: 8)))")
    }

    /// Backup, one more write, restore: the previous database is kept beside the restored one, and
    /// a server started on the restored file serves every main route with the backed-up data.
    func testRestoredDatabaseServesEveryRoute() async throws {
        var live = try startServer()
        var api = APIClient(base: live.base)
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let room = try await api.post("/api/rooms", ["name": "r", "memberIds": [.string(bob.id)]], token: alice.token).dataString("id")
        let element = try await noteId(api, room, token: alice.token)
        _ = try await api.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", token: bob.token)
        _ = try await api.post("/api/rooms/\(room)/messages", ["text": "kept"], token: bob.token)
        let post = try await api.post("/api/mobile/posts", ["content": "p"], token: alice.token).dataString("id")
        let backup = dir + "/b.sqlite"
        _ = try DatabaseBackup.backup(databasePath: databasePath, to: backup)
        let lost = try await noteId(api, room, token: alice.token)
        await live.stop()

        let report = try DatabaseBackup.restore(from: backup, databasePath: databasePath, migrator: EmbeddedMigrations.migrator())
        let previous = try XCTUnwrap(report.previous)
        XCTAssertTrue(previous.hasPrefix(databasePath + ".before-restore-"), previous)
        XCTAssertTrue(try elementIds(in: previous).contains(lost), "the replaced database is kept whole, its WAL folded in")
        XCTAssertFalse(try elementIds(in: databasePath).contains(lost))
        let modes = try [previous, databasePath].map { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: $0)[.posixPermissions] as? NSNumber).intValue }
        XCTAssertEqual(modes[1], modes[0], "the restored database keeps the mode of the one it replaced")

        live = try startServer()
        api = APIClient(base: live.base)
        let login = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"])
        XCTAssertEqual(login.status, 200)
        let token = try login.dataString("token")
        let old = try await api.get("/api/auth/me", token: alice.token)
        XCTAssertEqual(old.status, 200, "tokens issued before the backup stay valid (same secret, same token version)")
        let gets: [(String, Int)] = [("/api/auth/me", 200), ("/api/rooms/my-rooms", 200), ("/api/rooms/\(room)", 200),
                                     ("/api/rooms/\(room)/elements", 200), ("/api/rooms/\(room)/elements/\(element)/reactions", 200),
                                     ("/api/rooms/\(room)/messages", 200), ("/api/notifications", 200), ("/api/auth/me/export", 200),
                                     ("/health", 200), ("/metrics", 200), ("/openapi.json", 200)]
        for (path, status) in gets {
            let r = try await api.get(path, token: token)
            XCTAssertEqual(r.status, status, "\(path): \(String(decoding: r.body.prefix(300), as: UTF8.self))")
        }
        let elements = try await api.get("/api/rooms/\(room)/elements", token: token).json["data"]?.arrayValue ?? []
        XCTAssertEqual(elements.compactMap { $0["id"]?.stringValue }, [element])
        let messages = try await api.get("/api/rooms/\(room)/messages", token: token)
        XCTAssertTrue(String(decoding: messages.body, as: UTF8.self).contains("kept"))
        let writes: [(String, String, JSONValue?, Int)] = [
            ("POST", "/api/rooms/\(room)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1], 201),
            ("PATCH", "/api/rooms/\(room)", ["name": "renamed"], 200),
            ("POST", "/api/rooms/\(room)/elements/\(element)/reactions/toggle", nil, 200),
            ("POST", "/api/rooms/\(room)/seen", nil, 200),
            ("POST", "/api/rooms/\(room)/messages", ["text": "after restore"], 201),
            ("POST", "/api/rooms/\(room)/messages/read", nil, 200),
            ("POST", "/api/mobile/posts/\(post)/like", nil, 200),
            ("POST", "/api/mobile/posts/\(post)/save", nil, 200),
            ("POST", "/api/mobile/posts", ["content": "new"], 201),
            ("POST", "/api/devices", ["token": "t1", "platform": "ios"], 201),
            ("POST", "/api/auth/refresh", nil, 200),
        ]
        for (method, path, body, status) in writes {
            let r = try await api.send(method, path, json: body, token: token)
            XCTAssertEqual(r.status, status, "\(method) \(path): \(String(decoding: r.body.prefix(300), as: UTF8.self))")
        }
        let socket = try await PollingSocket.connect(base: live.base, token: token)
        try await socket.emit("room:join", ["roomId": .string(room)], ackId: 1)
        let ack = try await socket.receive(until: { $0.hasPrefix("431") })
        XCTAssertFalse(ack.contains { $0.hasPrefix("431") && $0.contains("error") }, "\(ack)")
        await live.stop()
    }

    /// While a server has the database open, restore refuses and names the server's pid (this
    /// process: the test's server runs in it), and leaves the database alone.
    func testRestoreRefusesWhileAServerHoldsTheDatabase() async throws {
        let live = try startServer()
        let api = APIClient(base: live.base)
        _ = try await api.register("alice")
        let backup = dir + "/b.sqlite"
        _ = try DatabaseBackup.backup(databasePath: databasePath, to: backup)
        XCTAssertThrowsError(try DatabaseBackup.restore(from: backup, databasePath: databasePath, migrator: EmbeddedMigrations.migrator())) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("process \(getpid())"), text)
            XCTAssertTrue(text.contains("stop it before restoring"), text)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertFalse(names.contains { $0.contains("before-restore") || $0.hasSuffix(".restoring") }, "\(names)")
        let me = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"])
        XCTAssertEqual(me.status, 200, "the server goes on")
        await live.stop()
        // Once the server is gone the same restore goes through.
        let report = try DatabaseBackup.restore(from: backup, databasePath: databasePath, migrator: EmbeddedMigrations.migrator())
        XCTAssertNotNil(report.previous)
    }

    /// A backup whose migrations this binary does not have (a newer version's), or whose recorded
    /// checksum differs, or that is not a database at all, is refused before anything is touched.
    func testRestoreRefusesForeignSchemasAndDamagedFiles() async throws {
        let live = try startServer()
        await live.stop()
        let newer = dir + "/newer.sqlite"
        _ = try DatabaseBackup.backup(databasePath: databasePath, to: newer)
        let c = try SQLiteConnection(path: newer, configuration: DatabaseConfiguration())
        try c.run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (9999, 'future', 'abc', 'now')")
        c.close()
        let changed = dir + "/changed.sqlite"
        _ = try DatabaseBackup.backup(databasePath: databasePath, to: changed)
        let c2 = try SQLiteConnection(path: changed, configuration: DatabaseConfiguration())
        try c2.run("UPDATE schema_migrations SET checksum = 'deadbeef' WHERE version = 1")
        c2.close()
        let junk = dir + "/junk.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: junk))
        let migrator = try EmbeddedMigrations.migrator()
        for (file, expected) in [(newer, "migration 9999"), (changed, "checksum"), (junk, junk), (dir + "/none.sqlite", "no backup file")] {
            XCTAssertThrowsError(try DatabaseBackup.restore(from: file, databasePath: databasePath, migrator: migrator), file) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertFalse(names.contains { $0.contains("before-restore") }, "\(names)")
    }

    /// The whole schema is compared with what the backup's migrations make: one more table, a
    /// trigger on `users`, an index or a view, or a changed or missing one, is refused and named;
    /// the untouched backup of the same database is restored.
    func testRestoreRefusesASchemaTheMigrationsDoNotMakeNamingTheDifference() async throws {
        let live = try startServer()
        await live.stop()
        let migrator = try EmbeddedMigrations.migrator()
        let index = try XCTUnwrap(try SQLiteSchema.objects(at: databasePath).first { $0.type == "index" }, "the migrations make an index")
        let tampering: [(name: String, sql: String, named: String)] = [
            ("table", "CREATE TABLE stash (secret TEXT)", "table stash is not made by any migration"),
            ("trigger", "CREATE TRIGGER users_copy AFTER UPDATE ON users BEGIN INSERT INTO users SELECT * FROM users WHERE 0; END",
             "trigger users_copy on users is not made by any migration"),
            ("index", "CREATE INDEX users_by_password ON users(password_hash)", "index users_by_password on users is not made by any migration"),
            ("view", "CREATE VIEW hashes AS SELECT username, password_hash FROM users", "view hashes is not made by any migration"),
            ("dropped index", "DROP INDEX \(index.name)", "index \(index.name) on \(index.table) is missing"),
        ]
        for t in tampering {
            let file = dir + "/tampered-\(t.name.replacingOccurrences(of: " ", with: "-")).sqlite"
            _ = try DatabaseBackup.backup(databasePath: databasePath, to: file)
            let c = try SQLiteConnection(path: file, configuration: DatabaseConfiguration())
            try c.executeScript(t.sql)
            c.close()
            XCTAssertThrowsError(try DatabaseBackup.restore(from: file, databasePath: databasePath, migrator: migrator), t.name) { error in
                XCTAssertTrue("\(error)".contains(t.named), "\(t.name): \(error)")
                XCTAssertTrue("\(error)".contains("not restored"), "\(error)")
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertFalse(names.contains { $0.contains("before-restore") }, "nothing was replaced: \(names)")

        let honest = dir + "/honest.sqlite"
        _ = try DatabaseBackup.backup(databasePath: databasePath, to: honest)
        let report = try DatabaseBackup.restore(from: honest, databasePath: databasePath, migrator: migrator)
        XCTAssertEqual(report.databasePath, databasePath)
    }

    /// A backup from an older version (fewer migrations) is compared with what those migrations
    /// make, not with today's schema, and is restored.
    func testRestoreComparesAnOlderBackupWithItsOwnMigrations() throws {
        let migrator = try EmbeddedMigrations.migrator()
        let all = try migrator.migrations(for: .sqlite)
        XCTAssertGreaterThan(all.count, 1)
        // The repository's migrations but the newest, as an older version had them.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let olderDir = dir + "/older-migrations"
        try FileManager.default.createDirectory(atPath: olderDir, withIntermediateDirectories: true)
        for migration in all.dropLast() {
            try FileManager.default.copyItem(atPath: root.appendingPathComponent("Migrations/\(migration.fileName)").path,
                                             toPath: olderDir + "/" + migration.fileName)
        }
        let old = dir + "/old.sqlite"
        let db = try Database(path: old)
        try Migrator(directory: olderDir).migrate(db)
        db.close()
        XCTAssertEqual(try SQLiteBackup.appliedMigrations(at: old).count, all.count - 1)
        let report = try DatabaseBackup.restore(from: old, databasePath: databasePath, migrator: migrator)
        XCTAssertEqual(report.migrations, all.count - 1)
    }

    /// With backup.directory and a short interval, backups appear while serving, are checked,
    /// rotate to backup.keep, and the last one is in /health and /metrics.
    func testScheduledBackupsAppearAndRotate() async throws {
        let backups = dir + "/backups"
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        let unfinished = backups + "/touchsync-20261126T000000.000Z.sqlite.partial-999999"
        XCTAssertTrue(FileManager.default.createFile(atPath: unfinished, contents: Data("half".utf8)))
        let live = try startServer(["backup.directory": .string(backups), "backup.interval": "150ms", "backup.keep": 2])
        let api = APIClient(base: live.base)
        _ = try await api.register("alice")
        let scheduler = try XCTUnwrap(live.server.backups)
        func files() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: backups)) ?? []).filter { $0.hasSuffix(".sqlite") }.sorted()
        }
        // Until four backups were seen and the run that wrote the newest one has finished (its
        // outcome is recorded after it rotated): `now` is the directory as that run left it.
        var seen = Set<String>()
        var now: [String] = []
        await until(timeout: .seconds(30)) {
            now = files()
            seen.formUnion(now)
            let finished = scheduler.lastOutcome.map { ($0.file as NSString).lastPathComponent }
            return seen.count >= 4 && finished != nil && now.last == finished
        }
        XCTAssertGreaterThanOrEqual(seen.count, 4, "backups appear one interval apart: \(seen)")
        let last = try XCTUnwrap(scheduler.lastOutcome)
        XCTAssertTrue(last.ok, last.error ?? "")
        XCTAssertLessThanOrEqual(now.count, 2, "rotated to backup.keep: \(now)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: unfinished), "a copy left by a backup that did not finish is removed at start")
        XCTAssertTrue(now.allSatisfy { $0.hasPrefix("touchsync-") }, "\(now)")
        let newest = try XCTUnwrap(now.last)
        XCTAssertEqual(try SQLiteBackup.integrityProblems(at: backups + "/" + newest), [])
        XCTAssertEqual(try SQLiteConnection(path: backups + "/" + newest, readOnly: true, configuration: DatabaseConfiguration())
            .scalarInt("SELECT count(*) FROM users"), 1)

        let health = try await api.get("/health")
        XCTAssertEqual(health.json["backup"]?["status"]?.stringValue, "ok", String(decoding: health.body, as: UTF8.self))
        XCTAssertEqual(health.json["backup"]?["directory"]?.stringValue, backups)
        XCTAssertTrue(health.json["backup"]?["file"]?.stringValue?.hasPrefix(backups + "/touchsync-") ?? false)
        XCTAssertGreaterThan(health.json["backup"]?["bytes"]?.intValue ?? 0, 0)
        let metrics = String(decoding: try await api.get("/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("touchsync_backup_last_ok 1"), metrics)
        XCTAssertTrue(metrics.contains("touchsync_backups_total{outcome=\"ok\"}"), metrics)
        await live.stop()
    }
}

extension BackupTests {
    /// The first scheduled backup is due an interval after the newest one already there: at once
    /// with none or an old one, later with a recent one (a server restarted often still backs up).
    func testTheFirstScheduledBackupFollowsTheNewestOneInTheDirectory() throws {
        let backups = dir + "/scheduled"
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        let scheduler = ScheduledBackups(databasePath: databasePath, configuration: .init(directory: backups, interval: .seconds(3600), keep: 2),
                                         logger: Logger(label: "test"))
        let now = Date()
        XCTAssertEqual(scheduler.firstDelay(now: now), .zero, "no backup yet: one at start")
        let file = backups + "/touchsync-20261126T100000.000Z.sqlite"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data()))
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-600)], ofItemAtPath: file)
        let delay = scheduler.firstDelay(now: now)
        XCTAssertGreaterThan(delay, .seconds(2990))
        XCTAssertLessThanOrEqual(delay, .seconds(3001), "ten minutes old: due in fifty")
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-7200)], ofItemAtPath: file)
        XCTAssertEqual(scheduler.firstDelay(now: now), .zero, "older than the interval: at once")
    }
}

/// What `touchsync backup` / `restore` print for a PostgreSQL database (runs on either backend).
final class BackupPostgresAdviceTests: XCTestCase {
    func testPostgresDatabasesAreSentToPgDumpAndPgRestore() {
        let url = "postgres://ts:secret@db.example:5433/touchsync?sslmode=require"
        let dump = DatabaseBackup.postgresAdvice(url: url, file: "/backups/ts.dump", restore: false)
        XCTAssertTrue(dump.contains("pg_dump --format=custom --file=/backups/ts.dump --host=db.example --port=5433 --username=ts --dbname=touchsync"), dump)
        let restore = DatabaseBackup.postgresAdvice(url: url, file: "/backups/ts.dump", restore: true)
        XCTAssertTrue(restore.contains("pg_restore --clean --if-exists --no-owner --host=db.example --port=5433 --username=ts --dbname=touchsync /backups/ts.dump"), restore)
        XCTAssertFalse(dump.contains("secret") || restore.contains("secret"), "the password is never printed")
    }
}

/// The ids of acknowledged creates, shared between the writing task and the test.
final class AcknowledgedIds: @unchecked Sendable {
    private let lock = NSLock()
    private var ids = Set<String>()
    private var stopRequested = false
    func add(_ id: String) { lock.lock(); ids.insert(id); lock.unlock() }
    func stop() { lock.lock(); stopRequested = true; lock.unlock() }
    var stopped: Bool { lock.lock(); defer { lock.unlock() }; return stopRequested }
    var count: Int { lock.lock(); defer { lock.unlock() }; return ids.count }
    var snapshot: Set<String> { lock.lock(); defer { lock.unlock() }; return ids }
}
