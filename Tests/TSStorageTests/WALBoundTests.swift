import Foundation
import XCTest
@testable import TSStorage

/// The WAL stays bounded under sustained writes (`WALCheckpointer`): a background thread copies
/// it into the database with PASSIVE checkpoints while the writer keeps committing (the writer's
/// own automatic checkpoint is off), and at `walMaxBytes` the writer starts it over itself.
final class WALBoundTests: XCTestCase {
    static func walSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A file database (`synchronous = NORMAL`: these tests are about size, not durability) with
    /// a `blobs` table, configured by `configure`; closed at teardown.
    func openBlobs(_ configure: (inout DatabaseConfiguration) -> Void) throws -> (Database, String) {
        let path = try makeTemporaryDirectory(self) + "/wal.sqlite"
        var config = DatabaseConfiguration()
        config.synchronous = .normal
        configure(&config)
        let db = try Database(path: path, configuration: config)
        addTeardownBlock { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }
        return (db, path)
    }

    func testSustainedWritesKeepTheWALBounded() async throws {
        let (db, path) = try openBlobs {
            $0.walAutocheckpointPages = 100          // ≈ 400 KB of 4 KB pages
            $0.walMaxBytes = 1 << 20
            $0.journalSizeLimitBytes = 512 << 10
        }
        let body = String(repeating: "y", count: 4000)
        var largest = 0
        for round in 0..<200 {  // 2000 rows of 4 KB: 8 MB written through the WAL
            try await db.write { c in for _ in 0..<10 { try c.run("INSERT INTO blobs (body) VALUES (?)", [.text(body)]) } }
            // A read now and then, as a server would do; it ends before the next write.
            if round % 10 == 0 { _ = try await db.read { try $0.scalarInt("SELECT count(*) FROM blobs") } }
            largest = max(largest, Self.walSize(path))
        }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM blobs") }, 2000)
        // The WAL starts over at 1 MB, and the file is cut back to 512 KB each time: it never holds
        // much more than the bound plus one batch.
        XCTAssertLessThan(largest, 2 << 20, "the WAL grew to \(largest) bytes for 8 MB written")
        XCTAssertEqual(try db.withWriterConnection { try $0.scalarInt("PRAGMA wal_autocheckpoint") }, 0,
                       "no checkpoint runs inside the writer's commits")
    }

    /// Writes from many tasks at once, so the writer always has the next batch queued and never
    /// leaves SQLite an idle moment to start the WAL over by itself: the checkpointer's passes copy
    /// the WAL while the writer commits, and the writer's restarts at the bound keep the file
    /// under it. Runs until both have happened several times (observable counters), then checks
    /// every WAL size seen on the way.
    func testContinuousWritesFromManyTasksStayUnderTheBound() async throws {
        let (db, path) = try openBlobs {
            $0.walAutocheckpointPages = 50
            $0.walMaxBytes = 512 << 10
            $0.journalSizeLimitBytes = 512 << 10
            $0.maxWriteBatch = 8
        }
        let body = String(repeating: "z", count: 3000)
        let largest = LockedMax()
        let deadline = Date().addingTimeInterval(60)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    while Date() < deadline {
                        let c = db.walCheckpoints
                        if c.passes >= 5 && c.restarts >= 3 { return }
                        try await db.write { try $0.run("INSERT INTO blobs (body) VALUES (?)", [.text(body)]) }
                        largest.note(Self.walSize(path))
                    }
                }
            }
            try await group.waitForAll()
        }
        let c = db.walCheckpoints
        XCTAssertGreaterThanOrEqual(c.passes, 5, "background passes ran")
        XCTAssertGreaterThanOrEqual(c.restarts, 3, "the writer started the WAL over at its bound")
        XCTAssertEqual(c.restartsBusy, 0, "short reads never kept a restart from finishing")
        // The bound (512 KB) plus at most one batch of 8 rows (≈ 8 frames each way, 4 KB pages).
        XCTAssertLessThan(largest.value, (512 << 10) + (160 << 10), "the WAL reached \(largest.value) bytes")
        XCTAssertEqual(try db.readSync { try $0.scalarString("PRAGMA integrity_check") }, "ok")
    }

    /// A reader that keeps an old snapshot stops the WAL from starting over: the writer's restart
    /// reports busy after the busy timeout (back-pressure, logged) and writes still commit; once
    /// the reader is gone the next restart succeeds and the WAL is short again.
    func testAReaderOnAnOldSnapshotDelaysTheRestartUntilItEnds() async throws {
        let (db, path) = try openBlobs {
            $0.walAutocheckpointPages = 20
            $0.walMaxBytes = 128 << 10
            $0.busyTimeout = .milliseconds(20)
        }
        try await db.write { try $0.run("INSERT INTO blobs (body) VALUES ('first')") }
        // Another process's reader, holding its snapshot open.
        let reader = try SQLiteConnection(path: path, readOnly: true, configuration: db.configuration)
        try reader.executeScript("BEGIN")
        XCTAssertEqual(try reader.scalarInt("SELECT count(*) FROM blobs"), 1)
        let body = String(repeating: "p", count: 3000)
        var written = 1
        while db.walCheckpoints.restartsBusy < 2 && written < 2000 {
            try await db.write { try $0.run("INSERT INTO blobs (body) VALUES (?)", [.text(body)]) }
            written += 1
        }
        XCTAssertGreaterThanOrEqual(db.walCheckpoints.restartsBusy, 2, "the pinned snapshot kept the WAL from starting over")
        XCTAssertGreaterThan(Self.walSize(path), 128 << 10)
        XCTAssertEqual(try reader.scalarInt("SELECT count(*) FROM blobs"), 1, "the reader still sees its snapshot")
        try reader.executeScript("COMMIT")
        reader.close()
        let restartsBefore = db.walCheckpoints.restarts
        while db.walCheckpoints.restarts == restartsBefore && written < 4000 {
            try await db.write { try $0.run("INSERT INTO blobs (body) VALUES (?)", [.text(body)]) }
            written += 1
        }
        XCTAssertGreaterThan(db.walCheckpoints.restarts, restartsBefore, "the WAL started over once the reader had gone")
        try await db.write { try $0.run("INSERT INTO blobs (body) VALUES ('after')") }
        XCTAssertLessThan(db.walCheckpoints.walFrames, 20, "the next commit wrote from the start of the WAL")
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM blobs") }, Int64(written + 1))
    }
}

/// The largest value seen by several tasks.
final class LockedMax: @unchecked Sendable {
    // Invariant: `largest` is only touched with `lock` held.
    private let lock = NSLock()
    private var largest = 0
    func note(_ v: Int) { lock.lock(); largest = max(largest, v); lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return largest }
}
