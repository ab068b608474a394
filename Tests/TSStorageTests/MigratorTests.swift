import Foundation
import XCTest
@testable import TSStorage

final class MigratorTests: XCTestCase {
    func write(_ dir: String, _ name: String, _ sql: String) throws {
        try sql.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
    }

    func setUpDirs() throws -> (migrations: String, dbPath: String) {
        let root = try makeTemporaryDirectory(self)
        let migrations = root + "/Migrations"
        try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: true)
        return (migrations, root + "/db.sqlite")
    }

    func testAppliesInNumericOrderAndRerunIsNoOp() throws {
        let (dir, path) = try setUpDirs()
        try write(dir, "10_third.sql", "INSERT INTO log (step) VALUES ('10');")
        try write(dir, "0002_second.sql", "ALTER TABLE log ADD COLUMN extra TEXT; INSERT INTO log (step) VALUES ('2');")
        try write(dir, "0001_first.sql", "CREATE TABLE log (id INTEGER PRIMARY KEY, step TEXT NOT NULL); INSERT INTO log (step) VALUES ('1');")
        try write(dir, "README.md", "not a migration")
        let db = try Database(path: path)
        defer { db.close() }
        let migrator = Migrator(directory: dir)

        XCTAssertEqual(try migrator.pending(in: db).map(\.version), [1, 2, 10])
        let applied = try migrator.migrate(db)
        XCTAssertEqual(applied.map(\.fileName), ["0001_first.sql", "0002_second.sql", "10_third.sql"])
        XCTAssertEqual(try db.readSync { try $0.rows("SELECT step FROM log ORDER BY id") { $0.string(0) } }, ["1", "2", "10"])
        let recorded = try db.readSync {
            try $0.rows("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version") {
                ($0.int(0), $0.string(1), $0.string(2), $0.string(3))
            }
        }
        XCTAssertEqual(recorded.map(\.0), [1, 2, 10])
        XCTAssertEqual(recorded.map(\.1), ["first", "second", "third"])
        XCTAssertEqual(recorded[0].2, applied[0].checksum)
        XCTAssertEqual(recorded[0].2.count, 64)
        XCTAssertNotNil(recorded[0].3.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression), recorded[0].3)

        // Re-run: nothing pending, nothing applied, data unchanged.
        XCTAssertEqual(try migrator.pending(in: db), [])
        XCTAssertEqual(try migrator.migrate(db), [])
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM log") }, 3)

        // A new file is picked up on the next run.
        try write(dir, "0011_fourth.sql", "INSERT INTO log (step) VALUES ('11');")
        XCTAssertEqual(try migrator.migrate(db).map(\.version), [11])
    }

    func testEditedAppliedMigrationIsRefusedNamingTheFile() throws {
        let (dir, path) = try setUpDirs()
        try write(dir, "0001_init.sql", "CREATE TABLE a (id INTEGER);")
        let db = try Database(path: path)
        defer { db.close() }
        try Migrator(directory: dir).migrate(db)

        try write(dir, "0001_init.sql", "CREATE TABLE a (id INTEGER, extra TEXT);")
        try write(dir, "0002_more.sql", "CREATE TABLE b (id INTEGER);")
        for attempt in [{ try Migrator(directory: dir).migrate(db) }, { try Migrator(directory: dir).pending(in: db) }] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertEqual(error as? MigrationError, .checksumMismatch(file: "0001_init.sql"))
                let message = "\(error)"
                XCTAssertTrue(message.contains("0001_init.sql"), message)
                XCTAssertTrue(message.contains("new migration"), message)
            }
        }
        // Nothing after the mismatch ran.
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'b'") }, 0)
    }

    func testFailingMigrationIsRolledBackEntirely() throws {
        let (dir, path) = try setUpDirs()
        try write(dir, "0001_ok.sql", "CREATE TABLE a (id INTEGER PRIMARY KEY);")
        try write(dir, "0002_broken.sql", """
            CREATE TABLE b (id INTEGER);
            INSERT INTO a (id) VALUES (1);
            INSERT INTO nonexistent VALUES (1);
            """)
        try write(dir, "0003_later.sql", "CREATE TABLE c (id INTEGER);")
        let db = try Database(path: path)
        defer { db.close() }
        XCTAssertThrowsError(try Migrator(directory: dir).migrate(db)) { error in
            guard case .failed(let file, let message)? = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "0002_broken.sql")
            XCTAssertTrue(message.contains("no such table: nonexistent"), message)
            XCTAssertTrue("\(error)".contains("0002_broken.sql"))
        }
        try db.readSync { c in
            XCTAssertEqual(try c.rows("SELECT version FROM schema_migrations") { $0.int(0) }, [1])
            XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name IN ('b', 'c')"), 0)
            XCTAssertEqual(try c.scalarInt("SELECT count(*) FROM a"), 0)
        }
        // Fixing the file lets the run continue.
        try write(dir, "0002_broken.sql", "CREATE TABLE b (id INTEGER);")
        XCTAssertEqual(try Migrator(directory: dir).migrate(db).map(\.version), [2, 3])
    }

    func testForeignKeysOffMarkerForTableRebuilds() throws {
        let (dir, path) = try setUpDirs()
        try write(dir, "0001_init.sql", """
            CREATE TABLE p (id INTEGER PRIMARY KEY);
            CREATE TABLE k (id INTEGER PRIMARY KEY, p_id INTEGER REFERENCES p(id) ON DELETE CASCADE);
            INSERT INTO p VALUES (1); INSERT INTO k VALUES (1, 1);
            """)
        try write(dir, "0002_rebuild.sql", """
            \(Migrator.foreignKeysOffMarker)
            CREATE TABLE p_new (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO p_new (id) SELECT id FROM p;
            DROP TABLE p;
            ALTER TABLE p_new RENAME TO p;
            """)
        let db = try Database(path: path)
        defer { db.close() }
        try Migrator(directory: dir).migrate(db)
        // The child row survived the parent's rebuild (no cascade fired) and FKs are back on.
        XCTAssertEqual(try db.readSync { try $0.scalarInt("SELECT count(*) FROM k") }, 1)
        XCTAssertEqual(try db.writeSync { try $0.scalarInt("PRAGMA foreign_keys") }, 1)
    }

    func testBadFileNamesAndDuplicates() throws {
        let (dir, path) = try setUpDirs()
        let db = try Database(path: path)
        defer { db.close() }
        try write(dir, "init.sql", "SELECT 1;")
        XCTAssertThrowsError(try Migrator(directory: dir).migrate(db)) {
            XCTAssertEqual($0 as? MigrationError, .invalidFileName(file: "init.sql"))
        }
        try FileManager.default.removeItem(atPath: dir + "/init.sql")
        try write(dir, "0001_a.sql", "SELECT 1;")
        try write(dir, "1_b.sql", "SELECT 1;")
        XCTAssertThrowsError(try Migrator(directory: dir).migrate(db)) {
            XCTAssertEqual($0 as? MigrationError, .duplicateVersion(version: 1, files: ["0001_a.sql", "1_b.sql"]))
        }
        XCTAssertThrowsError(try Migrator(directory: dir + "/nope").migrate(db)) {
            XCTAssertEqual($0 as? MigrationError, .directoryNotFound(dir + "/nope"))
        }
    }

    func testLocateMigrationsDirectory() throws {
        let (dir, _) = try setUpDirs()
        XCTAssertEqual(Migrator.locateMigrationsDirectory(explicit: dir), dir)
        XCTAssertNil(Migrator.locateMigrationsDirectory(explicit: dir + "/missing"))
        XCTAssertEqual(Migrator.locateMigrationsDirectory(explicit: nil, environment: ["TOUCHSYNC_MIGRATIONS_DIR": dir]),
                       (dir as NSString).standardizingPath)
    }

    func testPureSwiftSHA256() {
        XCTAssertEqual(SHA256Digest.hexDigest(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256Digest.hexDigest([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256Digest.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Crosses the 55/56/64-byte padding boundaries.
        XCTAssertEqual(SHA256Digest.hexDigest([UInt8](repeating: 0x61, count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
