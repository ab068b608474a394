import Foundation
import TSSync
import XCTest
@testable import TSStorage
import TSStorageTestSupport

/// A gate a read can block on (on its reader thread) until the test opens it: how these tests
/// hold every reader busy without timing.
final class Gate: @unchecked Sendable {
    // Invariant: `open` and `waiting` are only touched with `condition` locked.
    private let condition = Condition()
    private var isOpen = false
    private var waiting = 0
    func pass() {
        condition.lock()
        waiting += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
    func release() { condition.withLock { isOpen = true; condition.broadcast() } }
    var waiters: Int { condition.withLock { waiting } }
}

final class ReaderPoolTests: XCTestCase {
    func openFileDatabase(_ config: DatabaseConfiguration = .init()) throws -> (Database, String) {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/test.sqlite"
        let db = try Database(path: path, configuration: config)
        addTeardownBlock { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)") }
        try db.writeSync { c in for i in 0..<10 { try c.run("INSERT INTO items (label) VALUES (?)", [.text("i\(i)")]) } }
        return (db, path)
    }

    /// The same on either backend (the pool's contract does not depend on it).
    func openDatabase(_ backend: StorageBackend, _ config: DatabaseConfiguration = .init()) throws -> (Database, String) {
        let (db, _) = try openTestDatabase(self, backend, config)
        try db.writeSync { try $0.executeScript("CREATE TABLE items (id \(autoIncrementKey(backend)), label TEXT NOT NULL)") }
        try db.writeSync { c in for i in 0..<10 { try c.run("INSERT INTO items (label) VALUES (?)", [.text("i\(i)")]) } }
        return (db, db.path)
    }

    /// 300 concurrent reads on 2 readers: every one completes with the right answer, on a reader
    /// thread (never the caller's).
    func testMoreConcurrentReadsThanReadersAllComplete() async throws { try await moreConcurrentReadsThanReadersAllComplete(.sqlite) }
    func testMoreConcurrentReadsThanReadersAllCompletePostgres() async throws { try await moreConcurrentReadsThanReadersAllComplete(.postgres) }
    func moreConcurrentReadsThanReadersAllComplete(_ backend: StorageBackend) async throws {
        var config = DatabaseConfiguration()
        config.readerCount = 2
        let (db, _) = try openDatabase(backend, config)
        let callerThreads = LockedValue(Set<UInt>())
        let readerThreads = LockedValue(Set<UInt>())
        let results = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<300 {
                group.addTask {
                    callerThreads.withLock { _ = $0.insert(UInt(pthread_self())) }
                    return try await db.read { c in
                        readerThreads.withLock { _ = $0.insert(UInt(pthread_self())) }
                        return (try c.scalarInt("SELECT count(*) + ? FROM items", [.int(Int64(i))]) ?? -1)
                    }
                }
            }
            var out: [Int64] = []
            for try await r in group { out.append(r) }
            return out
        }
        XCTAssertEqual(results.sorted(), (0..<300).map { Int64($0 + 10) })
        XCTAssertLessThanOrEqual(readerThreads.current.count, 2, "reads ran only on the 2 reader threads")
        XCTAssertTrue(readerThreads.current.isDisjoint(with: callerThreads.current), "no read ran on a caller's thread")
        // A reader counts itself idle just after resuming its caller.
        try await waitUntil { db.readPool.busy == 0 }
        let pool = db.readPool
        XCTAssertEqual(pool.readers, 2)
        XCTAssertEqual(pool.busy, 0)
        XCTAssertEqual(pool.queued, 0)
        XCTAssertGreaterThanOrEqual(pool.completed, 300)
        XCTAssertEqual(pool.rejected, 0)
    }

    /// With the only reader held busy, reads queue up to `maxQueuedReads`; the next one is refused
    /// at once with `DatabaseOverloadedError`, and the queued ones complete once the reader is free.
    func testTheWaitingQueueIsBoundedWithAClearError() async throws { try await theWaitingQueueIsBoundedWithAClearError(.sqlite) }
    func testTheWaitingQueueIsBoundedWithAClearErrorPostgres() async throws { try await theWaitingQueueIsBoundedWithAClearError(.postgres) }
    func theWaitingQueueIsBoundedWithAClearError(_ backend: StorageBackend) async throws {
        var config = DatabaseConfiguration()
        config.readerCount = 1
        config.maxQueuedReads = 3
        let (db, _) = try openDatabase(backend, config)
        let gate = Gate()
        let holder = Task { try await db.read { c -> Int64 in gate.pass(); return try c.scalarInt("SELECT count(*) FROM items") ?? -1 } }
        try await waitUntil { gate.waiters == 1 }
        let health = await db.health()
        XCTAssertEqual(health, .busy, "health does not queue behind a busy pool")

        var queued: [Task<Int64?, any Error>] = []
        for _ in 0..<3 { queued.append(Task { try await db.read { try $0.scalarInt("SELECT count(*) FROM items") } }) }
        try await waitUntil { db.readPool.queued == 3 }
        do {
            _ = try await db.read { try $0.scalarInt("SELECT 1") }
            XCTFail("a read past database.maxQueuedReads must be refused")
        } catch let e as DatabaseOverloadedError {
            XCTAssertEqual(e.maxQueuedReads, 3)
            XCTAssertTrue("\(e)".contains("3 reads are already waiting"), "\(e)")
        }
        XCTAssertEqual(db.readPool.rejected, 1)

        gate.release()
        let held = try await holder.value
        XCTAssertEqual(held, 10)
        for t in queued {
            let v = try await t.value
            XCTAssertEqual(v, 10)
        }
        try await waitUntil { db.readPool.busy == 0 }
        let after = await db.health()
        XCTAssertEqual(after, .ok)
    }

    /// A caller waiting for a busy reader is suspended, not blocking its thread: with every reader
    /// held, 64 waiting reads (far more than the runtime's threads) still leave the runtime free
    /// to run other work.
    func testWaitingReadsDoNotHoldTheirCallersThread() async throws { try await waitingReadsDoNotHoldTheirCallersThread(.sqlite) }
    func testWaitingReadsDoNotHoldTheirCallersThreadPostgres() async throws { try await waitingReadsDoNotHoldTheirCallersThread(.postgres) }
    func waitingReadsDoNotHoldTheirCallersThread(_ backend: StorageBackend) async throws {
        var config = DatabaseConfiguration()
        config.readerCount = 2
        let (db, _) = try openDatabase(backend, config)
        let gate = Gate()
        let holders = (0..<2).map { _ in Task { try await db.read { _ in gate.pass() } } }
        try await waitUntil { gate.waiters == 2 }
        // Many more waiting reads than cooperative threads: if waiting blocked a thread, the pool
        // of the concurrency runtime (one thread per core) would be exhausted and nothing below runs.
        let waiting = (0..<64).map { _ in Task { try await db.read { try $0.scalarInt("SELECT count(*) FROM items") } } }
        try await waitUntil { db.readPool.queued == 64 }
        let other = await Task { (1...1000).reduce(0, +) }.value
        XCTAssertEqual(other, 500_500, "the runtime's threads are free while reads wait")
        gate.release()
        for h in holders { try await h.value }
        for w in waiting {
            let v = try await w.value
            XCTAssertEqual(v, 10)
        }
    }

    /// `close` lets the queued reads finish, then refuses new ones.
    func testCloseFinishesQueuedReadsThenRefuses() async throws { try await closeFinishesQueuedReadsThenRefuses(.sqlite) }
    func testCloseFinishesQueuedReadsThenRefusesPostgres() async throws { try await closeFinishesQueuedReadsThenRefuses(.postgres) }
    func closeFinishesQueuedReadsThenRefuses(_ backend: StorageBackend) async throws {
        var config = DatabaseConfiguration()
        config.readerCount = 1
        let (db, _) = try openDatabase(backend, config)
        let gate = Gate()
        let holder = Task { try await db.read { _ in gate.pass() } }
        try await waitUntil { gate.waiters == 1 }
        let queued = Task { try await db.read { try $0.scalarInt("SELECT count(*) FROM items") } }
        try await waitUntil { db.readPool.queued == 1 }
        let closer = Thread { db.close() }
        closer.start()
        gate.release()
        try await holder.value
        let v = try await queued.value
        XCTAssertEqual(v, 10)
        try await waitUntil { (try? db.readSync { _ in 0 }) == nil }
        do {
            _ = try await db.read { _ in 1 }
            XCTFail("read after close must fail")
        } catch let e as StorageError {
            XCTAssertEqual(e.code, 21)  // SQLITE_MISUSE
        }
    }

    /// The WAL bound: the writer connection carries journal_size_limit and wal_autocheckpoint,
    /// and `checkpoint()` (TRUNCATE, on the writer thread) leaves a zero-byte WAL.
    func testCheckpointTruncatesTheWAL() async throws {
        var config = DatabaseConfiguration()
        config.journalSizeLimitBytes = 1 << 20
        config.walAutocheckpointPages = 0  // no automatic checkpoint: the WAL only grows
        let (db, path) = try openFileDatabase(config)
        XCTAssertEqual(try db.withWriterConnection { try $0.scalarInt("PRAGMA journal_size_limit") }, 1 << 20)
        XCTAssertEqual(try db.withWriterConnection { try $0.scalarInt("PRAGMA wal_autocheckpoint") }, 0)
        let blob = String(repeating: "x", count: 4000)
        for _ in 0..<50 {
            try await db.write { c in for _ in 0..<10 { try c.run("INSERT INTO items (label) VALUES (?)", [.text(blob)]) } }
        }
        let walPath = path + "-wal"
        let before = (try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? NSNumber)?.intValue ?? -1
        XCTAssertGreaterThan(before, 1 << 20, "500 rows of 4 KB went to the WAL")
        let result = try await db.checkpoint()
        XCTAssertFalse(result.busy)
        XCTAssertEqual(result.walFrames, 0, "TRUNCATE reports the reset WAL")
        let after = (try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? NSNumber)?.intValue ?? -1
        XCTAssertEqual(after, 0)
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM items") }, 510)
    }

    /// A checkpoint never waits for a reader that still uses the WAL: it reports busy at once,
    /// and writes keep committing meanwhile.
    func testCheckpointDoesNotWaitForAReader() async throws {
        var config = DatabaseConfiguration()
        config.readerCount = 1
        config.busyTimeout = .seconds(20)  // a checkpoint that waited would take 20 s
        let (db, _) = try openFileDatabase(config)
        try await db.write { try $0.run("INSERT INTO items (label) VALUES ('a')") }
        let gate = Gate()
        let holder = Task { try await db.read { c -> Int64 in
            let n = try c.scalarInt("SELECT count(*) FROM items") ?? -1  // the snapshot now pins the WAL
            gate.pass()
            return n
        } }
        try await waitUntil { gate.waiters == 1 }
        try await db.write { try $0.run("INSERT INTO items (label) VALUES ('b')") }
        let started = Date()
        let result = try await db.checkpoint()
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the checkpoint did not wait for the busy timeout")
        XCTAssertTrue(result.busy)
        try await db.write { try $0.run("INSERT INTO items (label) VALUES ('c')") }
        gate.release()
        let held = try await holder.value
        XCTAssertEqual(held, 11)
        let done = try await db.checkpoint()
        XCTAssertFalse(done.busy)
    }
}
