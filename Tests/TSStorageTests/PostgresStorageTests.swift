import Foundation
import Logging
import TSSync
import XCTest
@testable import TSStorage
import TSStorageTestSupport

/// What only the PostgreSQL backend has: placeholder translation, text-format values,
/// per-backend migrations under an advisory lock, several nodes writing at once (retries), and the
/// database going away and coming back (503 fast, recovery without a restart).
final class PostgresStorageTests: XCTestCase {
    // MARK: - Pure (every platform)

    func testPlaceholdersAreNumberedOutsideLiteralsAndComments() {
        XCTAssertEqual(PostgresSQL.translate("SELECT * FROM t WHERE a = ? AND b IN (?, ?)").sql, "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)")
        XCTAssertEqual(PostgresSQL.translate("SELECT * FROM t WHERE a = ? AND b IN (?, ?)").parameterCount, 3)
        let tricky = "SELECT '?', 'it''s ?', \"col?\" -- why?\n, ? /* ? */ , ?"
        XCTAssertEqual(PostgresSQL.translate(tricky).sql, "SELECT '?', 'it''s ?', \"col?\" -- why?\n, $1 /* ? */ , $2")
        XCTAssertEqual(PostgresSQL.translate(tricky).parameterCount, 2)
        XCTAssertEqual(PostgresSQL.translate("SELECT 1").parameterCount, 0)
        XCTAssertEqual(PostgresSQL.translate("SELECT é, ?").sql, "SELECT é, $1")
        // SQLite's numbered parameters: ?NNN, and a bare ? after them is one more than the largest.
        XCTAssertEqual(PostgresSQL.translate("WHERE id = ?1 AND (a = ?2 OR b = ?1) AND c = ?").sql, "WHERE id = $1 AND (a = $2 OR b = $1) AND c = $3")
        XCTAssertEqual(PostgresSQL.translate("WHERE id = ?1 AND (a = ?2 OR b = ?1) AND c = ?").parameterCount, 3)
        XCTAssertEqual(PostgresSQL.translate("VALUES (?12)").parameterCount, 12)
    }

    func testURLsAreRedactedAndRetargeted() {
        XCTAssertEqual(PostgresURL.redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db")
        XCTAssertEqual(PostgresURL.redact("postgres://u@h/db"), "postgres://u@h/db")
        XCTAssertEqual(PostgresURL.replacingDatabase(in: "postgres://u:p@h:1/db?sslmode=disable", with: "x"), "postgres://u:p@h:1/x?sslmode=disable")
        XCTAssertEqual(PostgresURL.replacingDatabase(in: "postgres://u@h:1", with: "x"), "postgres://u@h:1/x")
        XCTAssertTrue(PostgresURL.isPostgres("postgresql://h/db"))
        XCTAssertFalse(PostgresURL.isPostgres("./data/x.sqlite"))
    }

    // MARK: - Values

    func testValuesRoundTripInTextFormat() throws {
        let (db, _) = try openTestDatabase(self, .postgres)
        try db.writeSync { c in
            try c.executeScript("CREATE TABLE v (i BIGINT, d DOUBLE PRECISION, t TEXT, b BYTEA, flag BOOLEAN, n INTEGER)")
            try c.run("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)",
                      [.int(-9_000_000_000_000), .double(1.5e-7), .text("héllo '?' \"x\""), .blob([0, 1, 0xfe, 0xff]), .text("t"), .null])
        }
        let row = try db.readSync { c in
            try c.first("SELECT i, d, t, b, flag, n, 2.5::numeric FROM v") { r in
                (r.int(0), r.double(1), r.string(2), r.blob(3), r.bool(4), r.int(4), r.isNull(5), r.optionalInt(5), r.value(6), r.int(6))
            }
        }
        let r = try XCTUnwrap(row)
        XCTAssertEqual(r.0, -9_000_000_000_000)
        XCTAssertEqual(r.1, 1.5e-7)
        XCTAssertEqual(r.2, "héllo '?' \"x\"")
        XCTAssertEqual(r.3, [0, 1, 0xfe, 0xff])
        XCTAssertTrue(r.4)
        XCTAssertEqual(r.5, 1, "boolean t reads as 1")
        XCTAssertTrue(r.6)
        XCTAssertNil(r.7)
        XCTAssertEqual(r.8, .double(2.5))
        XCTAssertEqual(r.9, 2, "a numeric read as an integer truncates, like SQLite")
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM v WHERE flag = ?", [.text("f")]) }, 0)
        XCTAssertEqual(try db.readSync { try $0.scalarString("SELECT ? || '!'", [.text("a")]) }, "a!")
        // The column bytes without a String (my-rooms' writer): what `string` decodes, booleans as 1/0.
        var bytes: [[UInt8]] = []
        try db.readSync { c in
            try c.forEachRow("SELECT t, flag, n, i FROM v") { r in
                for k: Int32 in 0..<4 { bytes.append(r.withTextBytes(k) { Array($0) }) }
            }
        }
        XCTAssertEqual(bytes, [Array("héllo '?' \"x\"".utf8), Array("1".utf8), [], Array("-9000000000000".utf8)])
    }

    func testErrorsCarryTheirSQLStateAndMapToTheSameChecks() throws {
        let (db, _) = try openTestDatabase(self, .postgres)
        try db.writeSync { try $0.executeScript("CREATE TABLE u (k TEXT PRIMARY KEY, parent TEXT REFERENCES u(k))") }
        try db.writeSync { try $0.run("INSERT INTO u (k) VALUES ('a')") }
        XCTAssertThrowsError(try db.writeSync { try $0.run("INSERT INTO u (k) VALUES ('a')") }) { error in
            let e = error as? StorageError
            XCTAssertEqual(e?.sqlState, "23505")
            XCTAssertEqual(e?.isUniqueViolation, true)
            XCTAssertTrue("\(error)".contains("SQLSTATE 23505"), "\(error)")
        }
        XCTAssertThrowsError(try db.writeSync { try $0.run("INSERT INTO u (k, parent) VALUES ('b', 'zz')") }) { error in
            XCTAssertEqual((error as? StorageError)?.isForeignKeyViolation, true, "\(error)")
        }
        // A failed statement inside a write job is rolled back to the job's savepoint; the batch goes on.
        let ok = try db.writeSync { c -> Int in
            _ = try? c.savepoint { try c.run("INSERT INTO u (k) VALUES ('a')") }
            return try c.run("INSERT INTO u (k) VALUES ('c')")
        }
        XCTAssertEqual(ok, 1)
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM u") }, 2)
    }

    /// A job that catches a PostgreSQL error itself (no savepoint) leaves its transaction aborted:
    /// it fails with a clear error instead of "succeeding" with nothing committed, and the other
    /// jobs of its batch commit.
    func testAJobSwallowingAnErrorFailsAloneInsteadOfLosingItsBatch() async throws {
        let (db, _) = try openTestDatabase(self, .postgres)
        try db.writeSync { try $0.executeScript("CREATE TABLE k (v TEXT PRIMARY KEY)") }
        try await db.write { try $0.run("INSERT INTO k VALUES ('taken')") }
        async let bad: Void = db.write { c in _ = try? c.run("INSERT INTO k VALUES ('taken')") }
        async let good1: Int = db.write { try $0.run("INSERT INTO k VALUES ('a')") }
        async let good2: Int = db.write { try $0.run("INSERT INTO k VALUES ('b')") }
        do {
            try await bad
            XCTFail("the job's statement failed: it must not report success")
        } catch let e as StorageError {
            XCTAssertEqual(e.sqlState, "25P02", "\(e)")
            XCTAssertTrue(e.message.contains("savepoint"), e.message)
        }
        let (g1, g2) = try await (good1, good2)
        XCTAssertEqual(g1 + g2, 2)
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM k") }, 3)
        // `transaction` says so too, instead of a silent ROLLBACK at COMMIT.
        XCTAssertThrowsError(try db.writeSync { c in _ = try? c.run("INSERT INTO k VALUES ('taken')") }) { error in
            XCTAssertEqual((error as? StorageError)?.sqlState, "25P02", "\(error)")
        }
    }

    // MARK: - Migrations

    func testMigrationsPerBackendUnderAnAdvisoryLock() throws {
        let root = try makeTemporaryDirectory(self)
        let pgDir = root + "/" + Migrator.postgresSubdirectory
        try FileManager.default.createDirectory(atPath: pgDir, withIntermediateDirectories: true)
        try "CREATE TABLE sqlite_only (id INTEGER);".write(toFile: root + "/0001_sqlite.sql", atomically: true, encoding: .utf8)
        try "CREATE TABLE log (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, step TEXT NOT NULL); INSERT INTO log (step) VALUES ('1');"
            .write(toFile: pgDir + "/0001_first.sql", atomically: true, encoding: .utf8)
        try "INSERT INTO log (step) VALUES ('2'); SELECT pg_sleep(0.2);".write(toFile: pgDir + "/0002_second.sql", atomically: true, encoding: .utf8)
        let url = try makePostgresDatabaseURL()

        // Three "nodes" start at once: each migration is applied exactly once.
        let applied = LockedValue([Int]())
        let failures = LockedValue([String]())
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            Thread {
                do {
                    let node = try Database(url: url)
                    defer { node.close() }
                    let done = try Migrator(directory: root).migrate(node)
                    applied.withLock { $0.append(contentsOf: done.map(\.version)) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                finished.signal()
            }.start()
        }
        for _ in 0..<3 { XCTAssertEqual(finished.wait(timeout: .now() + 60), .success, "a migrator did not finish") }
        let db = try Database(url: url)
        defer { db.close() }
        XCTAssertEqual(failures.current, [])
        XCTAssertEqual(applied.current.sorted(), [1, 2], "each PostgreSQL migration applied once across three migrators")
        XCTAssertEqual(try db.readSync { try $0.rows("SELECT step FROM log ORDER BY id") { $0.string(0) } }, ["1", "2"])
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM information_schema.tables WHERE table_name = 'sqlite_only'") }, 0,
                       "the SQLite set is not applied to PostgreSQL")
        let stamp = try db.readSync { try $0.scalarString("SELECT applied_at FROM schema_migrations WHERE version = 1") } ?? ""
        XCTAssertNotNil(stamp.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression), stamp)

        // Same checksum rule as SQLite: an edited applied file is refused, naming it.
        try "INSERT INTO log (step) VALUES ('two');".write(toFile: pgDir + "/0002_second.sql", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Migrator(directory: root).migrate(db)) { error in
            XCTAssertEqual(error as? MigrationError, .checksumMismatch(file: "0002_second.sql"))
        }
        // A failing migration is rolled back entirely and named.
        try "INSERT INTO log (step) VALUES ('2'); SELECT pg_sleep(0.2);".write(toFile: pgDir + "/0002_second.sql", atomically: true, encoding: .utf8)
        try "INSERT INTO log (step) VALUES ('3'); INSERT INTO nonexistent VALUES (1);".write(toFile: pgDir + "/0003_broken.sql", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Migrator(directory: root).migrate(db)) { error in
            guard case .failed(let file, _)? = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "0003_broken.sql")
        }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM log") }, 2)
        // pg_locks lists the whole cluster's locks; other tests' migrators on the same server hold
        // theirs in their own databases, so count only this database's advisory locks.
        XCTAssertEqual(try db.readSync {
            try $0.scalarInt("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """)
        }, 0, "the lock is released")
    }

    // MARK: - Two nodes

    /// Two `Database`s on one PostgreSQL database ("two nodes") write at once. Each pair of jobs is
    /// made to deadlock (A locks row 1 then 2, B row 2 then 1, gated so both hold their first lock):
    /// the server aborts one (40P01), that node rolls its batch back and re-runs the job alone, and
    /// every write ends committed exactly once with the right totals.
    func testTwoNodesWritingAtOnceRetryDeadlocksAndLoseNothing() async throws {
        let url = try makePostgresDatabaseURL()
        var config = DatabaseConfiguration()
        config.maxWriteRetries = 10  // both re-runs start at once and can deadlock again on a loaded machine
        let node1 = try Database(url: url, configuration: config)
        let node2 = try Database(url: url, configuration: config)
        addTeardownBlock { node1.close(); node2.close() }
        try node1.writeSync { c in
            try c.executeScript("""
                CREATE TABLE counters (id INTEGER PRIMARY KEY, n BIGINT NOT NULL);
                INSERT INTO counters VALUES (1, 0), (2, 0);
                CREATE TABLE log (id TEXT PRIMARY KEY);
                """)
        }
        let rounds = 4
        for round in 0..<rounds {
            let bothHoldOne = Barrier(parties: 2)
            let attemptsA = LockedValue(0)
            let attemptsB = LockedValue(0)
            async let a: Void = node1.write { c in
                try c.executeScript("SET deadlock_timeout = '50ms'")
                try c.run("UPDATE counters SET n = n + 1 WHERE id = 1")
                if attemptsA.withLock({ $0 += 1; return $0 }) == 1 { bothHoldOne.arrive() }
                try c.run("UPDATE counters SET n = n + 1 WHERE id = 2")
                try c.run("INSERT INTO log VALUES (?)", [.text("a\(round)")])
            }
            async let b: Void = node2.write { c in
                try c.executeScript("SET deadlock_timeout = '50ms'")
                try c.run("UPDATE counters SET n = n + 10 WHERE id = 2")
                if attemptsB.withLock({ $0 += 1; return $0 }) == 1 { bothHoldOne.arrive() }
                try c.run("UPDATE counters SET n = n + 10 WHERE id = 1")
                try c.run("INSERT INTO log VALUES (?)", [.text("b\(round)")])
            }
            _ = try await (a, b)
            // At least one of the two was aborted by the server and re-run (sometimes both are).
            XCTAssertGreaterThanOrEqual(attemptsA.current + attemptsB.current, 3, "round \(round): a deadlock was retried")
        }
        let totals = try node2.readSync { try $0.rows("SELECT n FROM counters ORDER BY id") { $0.int(0) } }
        XCTAssertEqual(totals, [Int64(rounds * 11), Int64(rounds * 11)])
        XCTAssertEqual(try node1.readSync { try $0.scalarInt("SELECT count(*) FROM log") }, Int64(rounds * 2))
        XCTAssertEqual(node1.stats.jobsFailed + node2.stats.jobsFailed, 0)
    }

    /// Many concurrent writes from two nodes on the same rows, with unique violations mixed in:
    /// those stay per-job errors; everything else commits exactly once.
    func testTwoNodesConcurrentWritesAllCommit() async throws {
        let url = try makePostgresDatabaseURL()
        let node1 = try Database(url: url)
        let node2 = try Database(url: url)
        addTeardownBlock { node1.close(); node2.close() }
        try node1.writeSync { try $0.executeScript("CREATE TABLE hits (k TEXT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0); CREATE TABLE once (k TEXT PRIMARY KEY)") }
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<200 {
                let node = i % 2 == 0 ? node1 : node2
                group.addTask {
                    do {
                        try await node.write { c in
                            try c.run("INSERT INTO hits (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET n = hits.n + 1", [.text("k\(i % 5)")])
                            try c.run("INSERT INTO once (k) VALUES (?)", [.text("o\(i % 150)")])
                        }
                        return true
                    } catch let e as StorageError where e.isUniqueViolation {
                        return false
                    }
                }
            }
            var out: [Bool] = []
            for try await o in group { out.append(o) }
            return out
        }
        XCTAssertEqual(outcomes.filter { $0 }.count, 150)
        XCTAssertEqual(try node1.readSync { try $0.scalarInt("SELECT sum(n) FROM hits") }, 150, "a job failing on its unique key was rolled back alone")
    }

    // MARK: - Outage

    /// The database stops (a crash: `pg_ctl stop -m immediate`): reads and writes fail at once with
    /// `DatabaseUnavailableError`, health is `.failed` with a reason; the server comes back and the
    /// same `Database` serves again without being reopened.
    func testOutageFailsFastThenRecoversWithoutRestart() async throws {
        try XCTSkipUnless(PostgresAdmin.isSupported, "PostgreSQL outage test skipped: this build has no PostgreSQL support")
        let server = try ScratchPostgres()
        addTeardownBlock { server.remove() }
        var config = DatabaseConfiguration()
        config.reconnectInitialBackoff = .milliseconds(50)
        config.reconnectMaxBackoff = .milliseconds(200)
        config.postgresConnectTimeout = .seconds(2)
        let db = try Database(url: server.url, configuration: config)
        addTeardownBlock { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE t (v BIGINT)") }
        try await db.write { try $0.run("INSERT INTO t VALUES (1)") }
        let okBefore = await db.health()
        XCTAssertEqual(okBefore, .ok)

        try server.stop()
        // The first use finds the connection dead, tries once to reconnect, and reports the loss.
        do {
            try await db.write { try $0.run("INSERT INTO t VALUES (2)") }
            XCTFail("a write while the database is down must fail")
        } catch let e as DatabaseUnavailableError {
            XCTAssertGreaterThanOrEqual(e.retryAfterSeconds, 1)
        }
        // From then on: refused at once, without touching the network.
        let started = Date()
        for _ in 0..<20 {
            do {
                _ = try await db.read { try $0.scalarInt("SELECT count(*) FROM t") }
                XCTFail("a read while the database is down must fail")
            } catch is DatabaseUnavailableError {}
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "refusals are immediate")
        let down = await db.health()
        XCTAssertEqual(down, .failed)
        XCTAssertNotNil(db.unavailableReason)
        XCTAssertTrue(db.unavailableReason?.contains("unreachable") == true, db.unavailableReason ?? "")

        try server.start()
        try await waitUntil(30) { db.unavailableReason == nil }
        let v = try await db.read { try $0.scalarInt("SELECT count(*) FROM t") }
        XCTAssertEqual(v, 1, "the write refused during the outage was not applied")
        try await db.write { try $0.run("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT sum(v) FROM t") }, 4)
        let okAfter = await db.health()
        XCTAssertEqual(okAfter, .ok)
    }

    /// A server that stops answering without closing anything (frozen: its kernel still accepts and
    /// acknowledges, as a hung or swapping machine does) is given up on at the call's deadline
    /// (statement timeout + connect timeout), reported unreachable, and used again once it answers.
    func testAServerThatStopsAnsweringIsGivenUpOnAtTheDeadlineThenUsedAgain() async throws {
        try XCTSkipUnless(PostgresAdmin.isSupported, "PostgreSQL deadline test skipped: this build has no PostgreSQL support")
        let server = try ScratchPostgres()
        addTeardownBlock { server.remove() }
        var config = DatabaseConfiguration()
        config.reconnectInitialBackoff = .milliseconds(50)
        config.reconnectMaxBackoff = .milliseconds(200)
        config.postgresConnectTimeout = .seconds(1)
        config.postgresStatementTimeout = .seconds(1)
        let db = try Database(url: server.url, configuration: config)
        addTeardownBlock { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE t (v BIGINT)") }
        try await db.write { try $0.run("INSERT INTO t VALUES (1)") }

        try server.freeze()
        addTeardownBlock { try? server.thaw() }
        let started = Date()
        // In a task of its own, so that a read that never ends fails this test instead of hanging
        // it (it ends once the teardown thaws the server).
        let outcome = LockedValue<(any Error)??>(nil)
        Task {
            do {
                _ = try await db.read { try $0.scalarInt("SELECT count(*) FROM t") }
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
        }
        try await waitUntil(15) { outcome.current != nil }
        let waited = Date().timeIntervalSince(started)
        let failure = try XCTUnwrap(outcome.current, "the read from a server that does not answer did not end within 15 s")
        let unavailable = try XCTUnwrap(failure as? DatabaseUnavailableError, "the read must fail as unavailable, got \(String(describing: failure))")
        XCTAssertGreaterThanOrEqual(unavailable.retryAfterSeconds, 1)
        // 2 s for the call, 1 s for the reconnection attempt that finds the server still silent.
        XCTAssertLessThan(waited, 8, "the read waited \(waited) s")
        XCTAssertGreaterThanOrEqual(waited, 1.5, "the read failed before its deadline: \(waited) s")
        do {
            try await db.write { try $0.run("INSERT INTO t VALUES (2)") }
            XCTFail("a write while the server does not answer must fail")
        } catch is DatabaseUnavailableError {}
        let down = await db.health()
        XCTAssertEqual(down, .failed)

        try server.thaw()
        try await waitUntil(30) { db.unavailableReason == nil }
        try await db.write { try $0.run("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT sum(v) FROM t") }, 4)
    }

    /// Without libpq (macOS), or with a URL that cannot be reached, the error says so.
    func testUnreachableAtStartupNamesTheServerWithoutThePassword() throws {
        var config = DatabaseConfiguration()
        config.startupWait = .zero
        config.postgresConnectTimeout = .seconds(1)
        XCTAssertThrowsError(try Database(url: "postgres://u:hunter2@127.0.0.1:1/db", configuration: config)) { error in
            let text = "\(error)"
            XCTAssertFalse(text.contains("hunter2"), text)
            if PostgresAdmin.isSupported {
                XCTAssertTrue(text.contains("cannot connect to PostgreSQL at postgres://u:***@127.0.0.1:1/db"), text)
            } else {
                XCTAssertTrue(text.contains("this build has no PostgreSQL support"), text)
            }
        }
    }
}

/// `parties` threads meet: each `arrive` blocks until all have arrived (or 5 s pass, so a test
/// that goes wrong fails instead of hanging).
final class Barrier: @unchecked Sendable {
    // Invariant: `arrived` is only touched with `condition` locked.
    private let condition = Condition()
    private var arrived = 0
    private let parties: Int
    init(parties: Int) { self.parties = parties }
    func arrive() {
        condition.lock()
        arrived += 1
        condition.broadcast()
        let deadline = Date().addingTimeInterval(5)
        while arrived < parties && Date() < deadline { condition.wait(timeout: .milliseconds(50)) }
        condition.unlock()
    }
}
