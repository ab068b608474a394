import Foundation
import TSStorage
import XCTest

/// The database holds password hashes: its file, `-wal` and `-shm` are created 0600 whatever the
/// umask, and an existing wider mode is named with the chmod that fixes it.
final class DatabaseFileModeTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "touchsync-modes-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let dir { try? FileManager.default.removeItem(atPath: dir) }
    }

    func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    func testANewDatabaseAndItsWALAndSHMAreReadableByTheOwnerOnly() throws {
        let path = dir + "/new.sqlite"
        let previous = umask(0o022)  // the common umask, under which SQLite's own files are 0644
        defer { umask(previous) }
        let db = try Database(path: path)
        defer { db.close() }
        try db.writeSync { try $0.executeScript("CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        for file in [path, path + "-wal", path + "-shm"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: file), file)
            let m = try mode(file)
            XCTAssertEqual(m, 0o600, "\(file) is \(String(m, radix: 8))")
        }
        XCTAssertNil(Database.widerModeWarning(path))
    }

    func testAnExistingWiderModeIsNamedWithTheChmodToRun() throws {
        let path = dir + "/old.sqlite"
        let db = try Database(path: path)
        db.close()
        XCTAssertEqual(chmod(path, 0o644), 0)
        let warning = try XCTUnwrap(Database.widerModeWarning(path))
        XCTAssertTrue(warning.contains("\(path) (0644)"), warning)
        XCTAssertTrue(warning.contains("run chmod 600 \(path)"), warning)
        XCTAssertEqual(Database.filesReadableByOthers(path).map(\.path), [path])
        XCTAssertEqual(Database.filesReadableByOthers(":memory:").count, 0)
    }
}
