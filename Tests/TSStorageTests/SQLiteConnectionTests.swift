import CSQLite
import XCTest
@testable import TSStorage

final class SQLiteConnectionTests: XCTestCase {
    func open() throws -> SQLiteConnection {
        try SQLiteConnection(path: ":memory:", configuration: DatabaseConfiguration())
    }

    func testBindAndReadEveryType() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n)")
        let blob: [UInt8] = [0, 1, 2, 255, 0]
        let text = "héllo \u{1F600} 'quoted' \0 nul"
        try c.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.int(Int64.max), .double(-1.5), .text(text), .blob(blob), .null])
        try c.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.int(Int64.min), 0.25, "", .blob([]), nil])
        try c.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [nil, nil, nil, nil, 7])

        let rows = try c.rows("SELECT i, d, s, b, n FROM t ORDER BY rowid") { r in
            [r.value(0), r.value(1), r.value(2), r.value(3), r.value(4)]
        }
        XCTAssertEqual(rows, [
            [.int(Int64.max), .double(-1.5), .text(text), .blob(blob), .null],
            [.int(Int64.min), .double(0.25), .text(""), .blob([]), .null],
            [.null, .null, .null, .null, .int(7)],
        ])
        // Typed accessors.
        let first = try XCTUnwrap(c.first("SELECT i, d, s, b, n FROM t ORDER BY rowid") { r in
            (r.int(0), r.double(1), r.string(2), r.blob(3), r.isNull(4), r.optionalInt(4), r.optionalString(4))
        })
        XCTAssertEqual(first.0, Int64.max)
        XCTAssertEqual(first.1, -1.5)
        XCTAssertEqual(first.2, text)
        XCTAssertEqual(first.3, blob)
        XCTAssertEqual(first.4, true)
        XCTAssertNil(first.5)
        XCTAssertNil(first.6)
        // Empty string and empty blob are not NULL.
        XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM t WHERE s = '' AND b IS NOT NULL AND length(b) = 0"), 1)
        let nulls = try XCTUnwrap(c.first("SELECT i, d, s, b FROM t WHERE n = 7") { r in
            (r.optionalInt(0), r.optionalDouble(1), r.optionalString(2), r.optionalBlob(3), r.optionalBool(0))
        })
        XCTAssertNil(nulls.0)
        XCTAssertNil(nulls.1)
        XCTAssertNil(nulls.2)
        XCTAssertNil(nulls.3)
        XCTAssertNil(nulls.4)
        // Bool round trip and helpers.
        XCTAssertEqual(try c.first("SELECT ?, ?", [.of(true), .of(false)]) { ($0.bool(0), $0.bool(1)) }.map { [$0.0, $0.1] }, [true, false])
        XCTAssertEqual(SQLValue.of(nil as String?), .null)
        XCTAssertEqual(SQLValue.of(5 as Int?), .int(5))
        XCTAssertEqual(SQLValue.of("x" as String?), .text("x"))
        XCTAssertEqual(try c.scalarString("SELECT ?", [.of(2.5 as Double?)]), "2.5")
    }

    /// `withTextBytes` hands over the column's own bytes: those `string` decodes (NULL and empty
    /// as no bytes; integers in their text form; ill-formed UTF-8 as stored), through the same
    /// forEachRow that hot reads use.
    func testTextBytesWithoutAString() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE t (k INTEGER, s)")
        try c.run("INSERT INTO t VALUES (1, 'plain'), (2, 'Zoë 🦊 \"q\"'), (3, ''), (4, NULL), (5, 42), (6, CAST(X'41FF42' AS TEXT))")
        var seen: [Int64: [UInt8]] = [:]
        try c.forEachRow("SELECT k, s FROM t ORDER BY k") { row in
            seen[row.int(0)] = row.withTextBytes(1) { Array($0) }
        }
        XCTAssertEqual(seen[1], Array("plain".utf8))
        XCTAssertEqual(seen[2], Array("Zoë 🦊 \"q\"".utf8))
        XCTAssertEqual(seen[3], [])
        XCTAssertEqual(seen[4], [])
        XCTAssertEqual(seen[5], Array("42".utf8))
        XCTAssertEqual(seen[6], [0x41, 0xFF, 0x42])
        XCTAssertEqual(seen.count, 6)
    }

    func testRunReturnsChangesAndLastInsertRowID() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a'), ('b'), ('c');")
        XCTAssertEqual(c.lastInsertRowID, 3)
        XCTAssertEqual(try c.run("UPDATE t SET v = 'z' WHERE id >= ?", [2]), 2)
        XCTAssertEqual(c.changes, 2)
        XCTAssertEqual(try c.run("INSERT INTO t (v) VALUES (?)", ["d"]), 1)
        XCTAssertEqual(c.lastInsertRowID, 4)
        XCTAssertEqual(try c.run("DELETE FROM t WHERE id = ?", [99]), 0)
        XCTAssertNil(try c.scalarInt("SELECT id FROM t WHERE id = 99"))
        // RETURNING rows are stepped through.
        XCTAssertEqual(try c.run("DELETE FROM t WHERE id <= 2 RETURNING id"), 2)
    }

    func testStatementCacheReuse() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE t (v INTEGER)")
        let s1 = try c.prepare("INSERT INTO t VALUES (?)")
        for i in 0..<100 { try c.run("INSERT INTO t VALUES (?)", [.int(Int64(i))]) }
        let s2 = try c.prepare("INSERT INTO t VALUES (?)")
        XCTAssertTrue(s1 === s2, "same SQL text must reuse the cached statement")
        XCTAssertEqual(c.cachedStatementCount, 1)
        XCTAssertEqual(try c.scalarInt("SELECT sum(v) FROM t"), 4950)
        // Bindings are cleared on reuse: an unbound parameter is NULL.
        let s3 = try c.prepare("INSERT INTO t VALUES (?)")
        XCTAssertFalse(try s3.step())
        XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM t WHERE v IS NULL"), 1)

        // Nested use of the same SQL inside a rows() closure gets a separate statement.
        let nested = try c.rows("SELECT v FROM t WHERE v < 3 ORDER BY v") { _ in
            try c.scalarInt("SELECT v FROM t WHERE v < 3 ORDER BY v") ?? -1
        }
        XCTAssertEqual(nested, [0, 0, 0])
    }

    func testStatementCacheIsBounded() throws {
        var config = DatabaseConfiguration()
        config.statementCacheCapacity = 8
        let c = try SQLiteConnection(path: ":memory:", configuration: config)
        for i in 0..<50 { _ = try c.scalarInt("SELECT \(i)") }
        XCTAssertLessThanOrEqual(c.cachedStatementCount, 8)
    }

    func testErrors() throws {
        let c = try open()
        try c.executeScript("""
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id), name TEXT UNIQUE);
            INSERT INTO parent VALUES (1);
            """)
        try c.run("INSERT INTO child VALUES (1, 1, 'a')")
        XCTAssertThrowsError(try c.run("INSERT INTO child VALUES (2, 1, 'a')")) { error in
            let e = error as! StorageError
            XCTAssertTrue(e.isConstraintViolation)
            XCTAssertTrue(e.isUniqueViolation)
            XCTAssertFalse(e.isBusy)
            XCTAssertEqual(e.sql, "INSERT INTO child VALUES (2, 1, 'a')")
            XCTAssertTrue(e.description.contains("UNIQUE"), e.description)
        }
        XCTAssertThrowsError(try c.run("INSERT INTO child VALUES (3, 42, 'b')")) { error in
            XCTAssertTrue((error as! StorageError).isForeignKeyViolation, "foreign_keys must be ON")
        }
        XCTAssertThrowsError(try c.run("SELECT ?", [])) { XCTAssertEqual(($0 as! StorageError).code, 25) } // SQLITE_RANGE
        XCTAssertThrowsError(try c.run("SELEC 1")) { XCTAssertEqual(($0 as! StorageError).primaryCode, 1) }
        XCTAssertThrowsError(try c.executeScript("CREATE TABLE x (a); CREATE TABLE x (a);")) {
            XCTAssertTrue(($0 as! StorageError).message.contains("already exists"))
        }
        // A failed executeScript still ran the statements before the failure (no implicit transaction).
        XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'x'"), 1)
    }

    func testTransactionRollsBackOnError() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE t (v INTEGER)")
        XCTAssertThrowsError(try c.transaction {
            try c.run("INSERT INTO t VALUES (1)")
            throw TestError(tag: "boom")
        }) { XCTAssertEqual($0 as? TestError, TestError(tag: "boom")) }
        XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM t"), 0)
        XCTAssertFalse(c.isInTransaction)

        // Committed.
        let r = try c.transaction { () throws -> Int in try c.run("INSERT INTO t VALUES (2)") }
        XCTAssertEqual(r, 1)
        XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM t"), 1)

        // Nested: the inner failure rolls back only the inner part.
        try c.transaction {
            try c.run("INSERT INTO t VALUES (3)")
            XCTAssertThrowsError(try c.transaction {
                try c.run("INSERT INTO t VALUES (4)")
                throw TestError(tag: "inner")
            })
            try c.run("INSERT INTO t VALUES (5)")
        }
        XCTAssertEqual(try c.rows("SELECT v FROM t ORDER BY v") { $0.int(0) }, [2, 3, 5])
    }

    /// SQLite's memory statistics are off in this process (`SQLiteConnection.processSettings`,
    /// made before SQLite initialises, whichever open comes first): a connection's allocations,
    /// a table and a 100 KB blob among them, are not counted (nor serialised on the statistics'
    /// mutex).
    func testMemoryStatisticsAreOff() throws {
        let c = try open()
        try c.executeScript("CREATE TABLE blobs (b); INSERT INTO blobs VALUES (randomblob(100000))")
        XCTAssertEqual(try c.scalarInt("SELECT length(b) FROM blobs"), 100_000)
        XCTAssertEqual(sqlite3_memory_used(), 0, "SQLite counted its allocations: SQLITE_CONFIG_MEMSTATUS was not applied before sqlite3_initialize")
    }

    func testPragmasApplied() throws {
        let dir = try makeTemporaryDirectory(self)
        let c = try SQLiteConnection(path: dir + "/p.sqlite", configuration: DatabaseConfiguration(busyTimeout: .milliseconds(1234), synchronous: "NORMAL"))
        XCTAssertEqual(try c.scalarString("PRAGMA journal_mode"), "wal")
        XCTAssertEqual(try c.scalarInt("PRAGMA foreign_keys"), 1)
        XCTAssertEqual(try c.scalarInt("PRAGMA synchronous"), 1)  // NORMAL
        XCTAssertEqual(try c.scalarInt("PRAGMA busy_timeout"), 1234)
        let full = try SQLiteConnection(path: dir + "/p.sqlite", configuration: DatabaseConfiguration())
        XCTAssertEqual(try full.scalarInt("PRAGMA synchronous"), 2)  // FULL
        XCTAssertThrowsError(try SQLiteConnection(path: dir + "/missing/x.sqlite", readOnly: true, configuration: DatabaseConfiguration()))
    }

    /// Toggle under load: reads through a memory map on every connection; the writer keeps a large
    /// page cache and its savepoints' statement journals in memory (temp_store = MEMORY).
    func testWritePathPragmas() throws {
        let dir = try makeTemporaryDirectory(self)
        var config = DatabaseConfiguration()
        config.mmapSizeBytes = 8 << 20
        config.writerCacheKiB = 4096
        let writer = try SQLiteConnection(path: dir + "/m.sqlite", configuration: config)
        XCTAssertEqual(try writer.scalarInt("PRAGMA mmap_size"), 8 << 20)
        XCTAssertEqual(try writer.scalarInt("PRAGMA cache_size"), -4096)
        XCTAssertEqual(try writer.scalarInt("PRAGMA temp_store"), 2)  // MEMORY
        let reader = try SQLiteConnection(path: dir + "/m.sqlite", readOnly: true, configuration: config)
        XCTAssertEqual(try reader.scalarInt("PRAGMA mmap_size"), 8 << 20)
        config.mmapSizeBytes = 0
        let unmapped = try SQLiteConnection(path: dir + "/m.sqlite", readOnly: true, configuration: config)
        XCTAssertEqual(try unmapped.scalarInt("PRAGMA mmap_size"), 0)
    }
}
