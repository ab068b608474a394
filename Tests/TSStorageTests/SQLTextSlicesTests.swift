import XCTest
@testable import TSStorage
import TSStorageTestSupport

/// `SQLTextSlices`: texts bound from where they stand in one buffer (SQLite: pointers into it, no
/// `String`) find the same rows as the same arguments bound one `SQLValue` each, on both backends,
/// with the slices' NULL padding and trailing values in their places.
final class SQLTextSlicesTests: XCTestCase {
    func testSlicesBindLikeTheirValues() async throws {
        for backend in [StorageBackend.sqlite, .postgres] {
            let db: Database
            do { db = try openTestDatabase(self, backend).db } catch let skip as XCTSkip {
                print("SQLTextSlicesTests: \(backend) skipped: \(skip.message ?? "no server")")
                continue
            }
            try db.writeSync { c in
                try c.executeScript("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
                for (i, k) in ["a", "bb", "Zoë 🦊", "", "ccc", "x\"y\\z"].enumerated() {
                    _ = try c.run("INSERT INTO kv (k, v) VALUES (?, ?)", [.text(k), .int(Int64(i))])
                }
            }
            // Keys side by side in one buffer, with bytes around them that belong to no key.
            let keys = ["ccc", "nope", "Zoë 🦊", "", "x\"y\\z", "a"]
            var bytes = Array("[".utf8), ranges: [Range<Int>] = []
            for k in keys {
                bytes += Array("\"".utf8)
                ranges.append(bytes.count..<(bytes.count + k.utf8.count))
                bytes += Array(k.utf8) + Array("\",".utf8)
            }
            let sql = "WITH q(i, k) AS (VALUES " + (0..<8).map { "(\($0), ?)" }.joined(separator: ", ") + ") "
                + "SELECT q.i, kv.v FROM q JOIN kv ON kv.k = q.k WHERE kv.v >= ? ORDER BY q.i"
            let slices = SQLTextSlices(bytes: bytes, ranges: ranges, nulls: 2, rest: [.int(0)])
            XCTAssertEqual(slices.count, 9)
            XCTAssertEqual(slices.values, keys.map { SQLValue.text($0) } + [.null, .null, .int(0)])
            let (bySlices, byValues) = try await db.read { c in
                var a: [[Int64]] = [], b: [[Int64]] = []
                c.prefetch(sql, slices)
                try c.forEachRow(sql, slices) { a.append([$0.int(0), $0.int(1)]) }
                try c.forEachRow(sql, slices.values) { b.append([$0.int(0), $0.int(1)]) }
                return (a, b)
            }
            XCTAssertEqual(bySlices, [[0, 4], [2, 2], [3, 3], [4, 5], [5, 0]], "\(backend)")
            XCTAssertEqual(bySlices, byValues, "\(backend)")
            // A count that does not match the statement's parameters fails, as with values.
            let short = SQLTextSlices(bytes: bytes, ranges: ranges, nulls: 1, rest: [.int(0)])
            do {
                _ = try await db.read { c in try c.forEachRow(sql, short) { _ in } }
                XCTFail("\(backend): 8 arguments for 9 parameters must fail")
            } catch {}
        }
    }
}
