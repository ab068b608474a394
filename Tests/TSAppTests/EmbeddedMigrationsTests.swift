import Foundation
import XCTest
@testable import TSApp
import TSStorage

/// The binary carries `Migrations/*.sql` (embedded at build time by the EmbedMigrations plugin).
final class EmbeddedMigrationsTests: XCTestCase {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The plugin embeds every file of the directory, byte for byte and in order.
    func testEmbeddedMigrationsMatchTheMigrationsDirectory() throws {
        try assertEmbeddedMatchDirectory(.sqlite, in: "", versions: true)
    }

    /// The PostgreSQL set (Migrations/postgres, its own numbering) is embedded the same way.
    func testEmbeddedPostgresMigrationsMatchTheirDirectory() throws {
        try assertEmbeddedMatchDirectory(.postgres, in: "postgres/", versions: false)
    }

    /// The embedded migrations of `dialect` are the files of its directory (`folder`, under
    /// Migrations/, names the files in the messages): the same names, checksums and SQL, and with
    /// `versions` the same version numbers.
    private func assertEmbeddedMatchDirectory(_ dialect: SQLDialect, in folder: String, versions: Bool) throws {
        let onDisk = try Migrator(directory: Self.root.appendingPathComponent("Migrations").path).migrations(for: dialect)
        let embedded = try EmbeddedMigrations.migrator().migrations(for: dialect)
        XCTAssertFalse(onDisk.isEmpty)
        let hint = "the embedded migrations differ from Migrations/ (Plugins/EmbedMigrations, Sources/embed-migrations)"
        XCTAssertEqual(embedded.map(\.fileName), onDisk.map(\.fileName), hint)
        for (e, d) in zip(embedded, onDisk) {
            XCTAssertEqual(e.checksum, d.checksum, "\(folder)\(d.fileName): \(hint)")
            XCTAssertEqual(e.sql, d.sql, "\(folder)\(d.fileName): \(hint)")
            if versions { XCTAssertEqual(e.version, d.version) }
        }
    }

    /// A SQLite database in a scratch directory of its own, removed when `body` returns.
    private func withScratchDatabase(_ body: (Database) throws -> Void) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("embedded-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Database(path: dir.appendingPathComponent("db.sqlite").path)
        defer { db.close() }
        try body(db)
    }

    func testEmbeddedMigrationsBuildTheSchema() throws { try withScratchDatabase { db in
        let applied = try EmbeddedMigrations.migrator().migrate(db)
        XCTAssertEqual(applied.count, EmbeddedMigrations.files.count)
        XCTAssertEqual(try EmbeddedMigrations.migrator().migrate(db).count, 0, "re-running applies nothing")
    } }

    /// A database that applied an earlier, comment-only text of a migration (its checksum is in
    /// `EmbeddedMigrations.earlierChecksums`) starts as before; any other checksum is still a
    /// changed migration, and a backup carrying the earlier text is still restorable.
    func testEarlierCommentOnlyRevisionsAreAcceptedAndNothingElse() throws { try withScratchDatabase { db in
        let migrator = try EmbeddedMigrations.migrator()
        try migrator.migrate(db)
        let current = Dictionary(uniqueKeysWithValues: try migrator.migrations(for: .sqlite).map { ($0.fileName, $0) })
        for (file, earlier) in EmbeddedMigrations.earlierChecksums where !file.hasPrefix("postgres/") {
            let migration = try XCTUnwrap(current[file], "\(file) is not an embedded migration")
            XCTAssertFalse(earlier.contains(migration.checksum), "\(file): its current checksum is not an earlier one")
            for old in earlier {
                try db.writeSync { try $0.run("UPDATE schema_migrations SET checksum = ? WHERE version = ?", [.text(old), .int(Int64(migration.version))]) }
                XCTAssertEqual(try migrator.pending(in: db), [], "\(file) with its earlier checksum counts as applied")
                XCTAssertEqual(try migrator.migrate(db), [])
            }
        }
        let pg = try migrator.migrations(for: .postgres).map { "postgres/" + $0.fileName }
        for file in EmbeddedMigrations.earlierChecksums.keys where file.hasPrefix("postgres/") {
            XCTAssertTrue(pg.contains(file), "\(file) is not an embedded PostgreSQL migration")
        }
        try db.writeSync { try $0.run("UPDATE schema_migrations SET checksum = ? WHERE version = 3", [.text(String(repeating: "0", count: 64))]) }
        XCTAssertThrowsError(try migrator.pending(in: db)) { error in
            guard case MigrationError.checksumMismatch(let file) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "0003_notification_pruning.sql")
        }
    } }
}
