import XCTest
@testable import TSStorage

/// `statementsWithFullTableScans` reports statements that read a whole stored table, and not
/// those that only read back a subquery's result (a window function over an index search).
final class SQLiteQueryPlanTests: XCTestCase {
    func testFullScansOfTablesAreReportedAndSubqueryResultsAreNot() throws {
        let c = try SQLiteConnection(path: ":memory:", configuration: DatabaseConfiguration())
        defer { c.close() }
        try c.executeScript("CREATE TABLE r (g TEXT NOT NULL, s INTEGER NOT NULL, v INTEGER NOT NULL); CREATE INDEX r_by_g ON r(g, s)")
        for g in ["a", "b", "c"] { for s in 0..<6 { try c.run("INSERT INTO r VALUES (?, ?, ?)", [.text(g), .int(Int64(s)), .int(Int64(s % 2))]) } }
        let unindexed = "SELECT g FROM r WHERE v = ?"
        let windowOverSearch = """
            SELECT t.g, t.s FROM (SELECT g, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s DESC) AS place FROM r WHERE g IN (?, ?)) t
            WHERE t.place <= 2 ORDER BY t.g, t.place
            """
        let windowOverScan = "SELECT t.g FROM (SELECT g, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v) AS place FROM r) t WHERE t.place <= 2"
        XCTAssertEqual(try c.rows(unindexed, [.int(1)]) { $0.string(0) }.count, 9)
        XCTAssertEqual(try c.rows(windowOverSearch, [.text("a"), .text("c")]) { "\($0.string(0))\($0.int(1))" }, ["a5", "a4", "c5", "c4"])
        XCTAssertEqual(try c.rows(windowOverScan) { $0.string(0) }.count, 6)
        let reported = Set(c.statementsWithFullTableScans().map(\.sql))
        XCTAssertEqual(reported, [unindexed, windowOverScan])
        XCTAssertFalse(c.scansStoredTable(windowOverSearch))
        XCTAssertTrue(c.scansStoredTable(unindexed))
    }
}
