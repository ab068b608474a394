import Foundation
import XCTest
@testable import TSStorage
import TSStorageTestSupport
import TSTestSupport

/// The database's contract, run against both backends: each `testX` has a
/// `testXPostgres` twin on a fresh PostgreSQL database, which skips visibly without a server.
final class DatabaseTests: XCTestCase {
    func openDatabase(_ backend: StorageBackend = .sqlite, _ config: DatabaseConfiguration = .init()) throws -> (Database, () throws -> Database) {
        let (db, reopen) = try openTestDatabase(self, backend, config)
        try db.writeSync { try $0.executeScript("CREATE TABLE items (id \(autoIncrementKey(backend)), label TEXT NOT NULL UNIQUE)") }
        return (db, reopen)
    }

    func testConcurrentWritesAllCommit() async throws { try await concurrentWritesAllCommit(.sqlite) }
    func testConcurrentWritesAllCommitPostgres() async throws { try await concurrentWritesAllCommit(.postgres) }
    func concurrentWritesAllCommit(_ backend: StorageBackend) async throws {
        let (db, _) = try openDatabase(backend)
        let ids = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<200 {
                group.addTask {
                    try await db.write { c in
                        try c.scalarInt("INSERT INTO items (label) VALUES (?) RETURNING id", [.text("item-\(i)")]) ?? -1
                    }
                }
            }
            var ids: [Int64] = []
            for try await id in group { ids.append(id) }
            return ids
        }
        XCTAssertEqual(Set(ids).count, 200)
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 200)
        let stats = db.stats
        XCTAssertEqual(stats.jobsCommitted, 201)  // + the CREATE TABLE writeSync
        XCTAssertEqual(stats.jobsFailed, 0)
        XCTAssertLessThanOrEqual(stats.transactionsCommitted, 201)
        XCTAssertEqual(db.writeQueueDepth, 0)
    }

    /// Holds the writer thread with a blocking job so the next jobs queue up, then releases it:
    /// they run as one batch; the throwing one is rolled back alone.
    func testThrowingJobDoesNotAffectItsBatchNeighbours() async throws { try await throwingJobDoesNotAffectItsBatchNeighbours(.sqlite) }
    func testThrowingJobDoesNotAffectItsBatchNeighboursPostgres() async throws { try await throwingJobDoesNotAffectItsBatchNeighbours(.postgres) }
    func throwingJobDoesNotAffectItsBatchNeighbours(_ backend: StorageBackend) async throws {
        let (db, _) = try openDatabase(backend)
        let release = DispatchSemaphore(value: 0)
        let started = Signal()
        let blocker = Task { try await db.write { _ in started.set(); release.wait() } }
        try await waitUntil { started.current == 1 }

        let results = Task {
            try await withThrowingTaskGroup(of: (Int, Result<Int, TestError>).self) { group in
                for i in 0..<10 {
                    group.addTask {
                        do {
                            let changed = try await db.write { c -> Int in
                                let n = try c.run("INSERT INTO items (label) VALUES (?)", [.text("row-\(i)")])
                                if i == 4 { throw TestError(tag: "job 4") }
                                return n
                            }
                            return (i, .success(changed))
                        } catch let e as TestError {
                            return (i, .failure(e))
                        }
                    }
                }
                var all: [Int: Result<Int, TestError>] = [:]
                for try await (i, r) in group { all[i] = r }
                return all
            }
        }
        try await waitUntil { db.writeQueueDepth == 10 }
        release.signal()
        try await blocker.value
        let all = try await results.value

        XCTAssertEqual(db.stats.lastBatchSize, 10, "the ten jobs should share one transaction")
        for i in 0..<10 {
            if i == 4 {
                XCTAssertEqual(all[i].map { r -> TestError? in if case .failure(let e) = r { e } else { nil } }, TestError(tag: "job 4"))
            } else {
                XCTAssertEqual(all[i].flatMap { try? $0.get() }, 1, "job \(i)")
            }
        }
        let labels = try db.readSync { try $0.rows("SELECT label FROM items ORDER BY label") { $0.string(0) } }
        XCTAssertEqual(labels, (0..<10).filter { $0 != 4 }.map { "row-\($0)" })
    }

    /// A deferred foreign key makes COMMIT itself fail: every job of the batch gets the error.
    func testCommitFailureFailsTheWholeBatch() async throws { try await commitFailureFailsTheWholeBatch(.sqlite) }
    func testCommitFailureFailsTheWholeBatchPostgres() async throws { try await commitFailureFailsTheWholeBatch(.postgres) }
    func commitFailureFailsTheWholeBatch(_ backend: StorageBackend) async throws {
        let (db, _) = try openDatabase(backend)
        try db.writeSync {
            try $0.executeScript("""
                CREATE TABLE parents (id INTEGER PRIMARY KEY);
                CREATE TABLE kids (id \(autoIncrementKey(backend)), parent_id INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED);
                """)
        }
        let release = DispatchSemaphore(value: 0)
        let started = Signal()
        let blocker = Task { try await db.write { _ in started.set(); release.wait() } }
        try await waitUntil { started.current == 1 }
        let good = Task { try await db.write { try $0.run("INSERT INTO items (label) VALUES ('good')") } }
        let bad = Task { try await db.write { try $0.run("INSERT INTO kids (parent_id) VALUES (999)") } }
        try await waitUntil { db.writeQueueDepth == 2 }
        release.signal()
        _ = try? await blocker.value
        for (name, task) in [("good", good), ("bad", bad)] {
            do {
                _ = try await task.value
                XCTFail("\(name) should have failed with the COMMIT error")
            } catch let e as StorageError {
                XCTAssertTrue(e.isForeignKeyViolation, "\(name): \(e)")
            }
        }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 0)
        XCTAssertEqual(db.stats.commitFailures, 1)
        // The writer recovers.
        try await db.write { try $0.run("INSERT INTO items (label) VALUES ('after')") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 1)
    }

    /// A write resumes its caller only after COMMIT: an independent connection sees the row.
    func testWriteIsCommittedBeforeItReturns() async throws { try await writeIsCommittedBeforeItReturns(.sqlite) }
    func testWriteIsCommittedBeforeItReturnsPostgres() async throws { try await writeIsCommittedBeforeItReturns(.postgres) }
    func writeIsCommittedBeforeItReturns(_ backend: StorageBackend) async throws {
        let (db, reopen) = try openDatabase(backend)
        for i in 0..<5 {
            try await db.write { try $0.run("INSERT INTO items (label) VALUES (?)", [.text("x\(i)")]) }
            let other = try reopen()  // an independent connection (another process / node)
            XCTAssertEqual(try other.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, Int64(i + 1))
            other.close()
        }
    }

    /// WAL: a reader is not blocked by an open write transaction and sees the last commit.
    func testReadWhileWriting() async throws { try await readWhileWriting(.sqlite) }
    func testReadWhileWritingPostgres() async throws { try await readWhileWriting(.postgres) }
    func readWhileWriting(_ backend: StorageBackend) async throws {
        let (db, _) = try openDatabase(backend)
        try db.writeSync { try $0.run("INSERT INTO items (label) VALUES ('committed')") }
        let release = DispatchSemaphore(value: 0)
        let inserted = Signal()
        let writer = Task {
            try await db.write { c in
                try c.run("INSERT INTO items (label) VALUES ('uncommitted')")
                inserted.set()
                release.wait()
            }
        }
        try await waitUntil { inserted.current == 1 }
        // Safety valve: if reads were blocked by the writer, this releases it and the assertion fails.
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { release.signal() }
        let during = try db.readSync { try $0.rows("SELECT label FROM items") { $0.string(0) } }
        XCTAssertEqual(during, ["committed"])
        release.signal()
        try await writer.value
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 2)
    }

    func testReadOnlyConnectionsRefuseWrites() throws { try readOnlyConnectionsRefuseWrites(.sqlite) }
    func testReadOnlyConnectionsRefuseWritesPostgres() throws { try readOnlyConnectionsRefuseWrites(.postgres) }
    func readOnlyConnectionsRefuseWrites(_ backend: StorageBackend) throws {
        let (db, _) = try openDatabase(backend)
        XCTAssertThrowsError(try db.readSync { try $0.run("INSERT INTO items (label) VALUES ('x')") })
    }

    func testMemoryDatabaseIsSharedByReadsAndWrites() async throws {
        let db = try Database(path: ":memory:")
        defer { db.close() }
        XCTAssertTrue(db.routesReadsThroughWriter)
        try db.writeSync { try $0.executeScript("CREATE TABLE t (v INTEGER)") }
        try await db.write { try $0.run("INSERT INTO t VALUES (1)") }
        try db.writeSync { try $0.run("INSERT INTO t VALUES (2)") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT sum(v) FROM t") }, 3)
        // Concurrent readers and writers all see one database.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask {
                    let changed = try await db.write { try $0.run("INSERT INTO t VALUES (?)", [.int(Int64(i))]) }
                    XCTAssertEqual(changed, 1)
                }
                group.addTask {
                    let n = try await db.read { try $0.scalarInt("SELECT count(*) FROM t") } ?? 0
                    XCTAssertGreaterThanOrEqual(n, 2)
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM t") }, 52)
        // Reads cannot write, and leave the connection writable afterwards.
        XCTAssertThrowsError(try db.readSync { try $0.run("INSERT INTO t VALUES (9)") })
        try db.writeSync { try $0.run("INSERT INTO t VALUES (9)") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM t") }, 53)
        // A reader marks itself idle just after it resumes its caller, so `health()` called right
        // after a read may still see every reader busy (`.busy`, which /health counts as up): the
        // pool must come back to `.ok` by itself.
        var health = await db.health()
        await until(timeout: .seconds(2)) {
            health = await db.health()
            return health != .busy
        }
        XCTAssertEqual(health, .ok)
    }

    func testWriteSyncRollsBackOnError() throws { try writeSyncRollsBackOnError(.sqlite) }
    func testWriteSyncRollsBackOnErrorPostgres() throws { try writeSyncRollsBackOnError(.postgres) }
    func writeSyncRollsBackOnError(_ backend: StorageBackend) throws {
        let (db, _) = try openDatabase(backend)
        XCTAssertThrowsError(try db.writeSync { c in
            try c.run("INSERT INTO items (label) VALUES ('a')")
            try c.run("INSERT INTO items (label) VALUES ('a')")  // UNIQUE violation
        }) { XCTAssertTrue(($0 as? StorageError)?.isUniqueViolation == true, "\($0)") }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 0)
    }

    func testCloseDrainsQueuedWritesAndRefusesNewOnes() async throws { try await closeDrainsQueuedWritesAndRefusesNewOnes(.sqlite) }
    func testCloseDrainsQueuedWritesAndRefusesNewOnesPostgres() async throws { try await closeDrainsQueuedWritesAndRefusesNewOnes(.postgres) }
    func closeDrainsQueuedWritesAndRefusesNewOnes(_ backend: StorageBackend) async throws {
        let (db, reopen) = try openDatabase(backend)
        let release = DispatchSemaphore(value: 0)
        let started = Signal()
        let blocker = Task { try await db.write { _ in started.set(); release.wait() } }
        try await waitUntil { started.current == 1 }
        let queued = Task { try await db.write { try $0.run("INSERT INTO items (label) VALUES ('queued')") } }
        try await waitUntil { db.writeQueueDepth == 1 }
        let closer = Thread { db.close() }
        closer.start()
        release.signal()
        try await blocker.value
        let queuedResult = try await queued.value
        XCTAssertEqual(queuedResult, 1)
        try await waitUntil { (try? db.readSync { _ in 0 }) == nil }
        do {
            try await db.write { _ in }
            XCTFail("write after close must fail")
        } catch let e as StorageError {
            XCTAssertEqual(e.code, 21)  // SQLITE_MISUSE
        }
        let reopened = try reopen()
        defer { reopened.close() }
        XCTAssertEqual(try reopened.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 1)
    }
}
