import Foundation
import XCTest
@testable import TSStorage

/// Under sustained writes the WAL stays bounded by `walAutocheckpointPages` and
/// `journalSizeLimitBytes`, with no explicit checkpoint.
final class WALBoundTests: XCTestCase {
    func testSustainedWritesKeepTheWALBounded() async throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/wal.sqlite"
        var config = DatabaseConfiguration()
        config.walAutocheckpointPages = 100          // ≈ 400 KB of 4 KB pages
        config.journalSizeLimitBytes = 512 << 10
        config.synchronous = .normal                 // this test is about size, not durability
        let db = try Database(path: path, configuration: config)
        defer { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }
        let body = String(repeating: "y", count: 4000)
        var largest = 0
        for round in 0..<200 {  // 2000 rows of 4 KB: 8 MB written through the WAL
            try await db.write { c in for _ in 0..<10 { try c.run("INSERT INTO blobs (body) VALUES (?)", [.text(body)]) } }
            // A read now and then, as a server would do; it ends before the next write.
            if round % 10 == 0 { _ = try await db.read { try $0.scalarInt("SELECT count(*) FROM blobs") } }
            let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
            largest = max(largest, wal)
        }
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM blobs") }, 2000)
        // Autocheckpoint at 100 pages, and after each reset the file is cut back to 512 KB: the WAL
        // never holds much more than one checkpoint's worth plus one batch.
        XCTAssertLessThan(largest, 2 << 20, "the WAL grew to \(largest) bytes for 8 MB written")
    }
}
