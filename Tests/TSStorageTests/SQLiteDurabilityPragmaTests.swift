import TSSync
import XCTest
@testable import TSStorage

/// On macOS, fsync(2) leaves a commit in the drive's cache; SQLite flushes it to stable storage
/// (F_FULLFSYNC) only with `fullfsync` and `checkpoint_fullfsync` on. The choice per system is a
/// pure function, checked here for both systems; the connection this test opens shows the values
/// SQLite actually holds on the system the test runs on.
final class SQLiteDurabilityPragmaTests: XCTestCase {
    func testDarwinFlushesCommitsAndCheckpointsToStableStorage() {
        XCTAssertEqual(SQLiteConnection.durabilityPragmas(for: .darwin),
                       ["PRAGMA fullfsync = ON", "PRAGMA checkpoint_fullfsync = ON"])
    }

    func testLinuxNeedsNothingBeyondSynchronous() {
        // fsync(2) on Linux already flushes the drive's cache; SQLite ignores fullfsync there.
        XCTAssertEqual(SQLiteConnection.durabilityPragmas(for: .linux), [])
    }

    /// A writable connection holds the pragmas of the system it runs on (on Linux: both off, as
    /// SQLite's defaults; on a Mac: both on), and a read-only one, which never syncs, is left alone.
    func testAnOpenedConnectionHoldsThePragmasOfItsSystem() throws {
        let path = try makeTemporaryDirectory(self) + "/durability.sqlite"
        let writer = try SQLiteConnection(path: path, configuration: DatabaseConfiguration(synchronous: .full))
        defer { writer.close() }
        let expected: Int64 = OperatingSystem.current == .darwin ? 1 : 0
        XCTAssertEqual(try writer.scalarInt("PRAGMA fullfsync"), expected)
        XCTAssertEqual(try writer.scalarInt("PRAGMA checkpoint_fullfsync"), expected)
        XCTAssertEqual(try writer.scalarInt("PRAGMA synchronous"), 2, "FULL")

        let reader = try SQLiteConnection(path: path, readOnly: true, configuration: DatabaseConfiguration())
        defer { reader.close() }
        XCTAssertEqual(try reader.scalarInt("PRAGMA fullfsync"), 0)
    }

    /// The Darwin pragmas are statements SQLite accepts and keeps on any system (so the list is not
    /// a typo that only a Mac would reveal): applied here, both read back as on.
    func testTheDarwinPragmasTakeEffectWhereverTheyRun() throws {
        let path = try makeTemporaryDirectory(self) + "/darwin-pragmas.sqlite"
        let c = try SQLiteConnection(path: path, configuration: DatabaseConfiguration(synchronous: .full))
        defer { c.close() }
        for pragma in SQLiteConnection.durabilityPragmas(for: .darwin) { try c.executeScript(pragma) }
        XCTAssertEqual(try c.scalarInt("PRAGMA fullfsync"), 1)
        XCTAssertEqual(try c.scalarInt("PRAGMA checkpoint_fullfsync"), 1)
    }
}
