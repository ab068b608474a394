import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import TSStorageTestSupport
import XCTest

/// Migrations/0006 (and Migrations/postgres/0003) drop the unique index on `reactions.id`, one
/// B-tree a toggle wrote that no query needs: the rows survive the rebuild, only the two indexes
/// that serve queries remain, and every query on reactions by id still has the element's key.
final class ReactionIndexMigrationTests: XCTestCase {
    func testMigrationKeepsTheRowsAndDropsOnlyTheIdIndex() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reaction-index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = URL(fileURLWithPath: DomainFixture.migrationsDirectory)
        let all = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasSuffix(".sql") }.sorted()
        let ours = "0006_reactions_without_id_index.sql"
        XCTAssertTrue(all.contains(ours))
        for f in all where f < ours { try FileManager.default.copyItem(at: source.appendingPathComponent(f), to: dir.appendingPathComponent(f)) }
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        defer { db.close() }
        try Migrator(directory: dir.path).migrate(db)
        // Today's write path also needs the room event number, a later migration's column: added
        // here by hand, so that the database is otherwise exactly as before this migration.
        try db.writeSync { c in try c.run("ALTER TABLE rooms ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0") }
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), logger: Logger(label: "test"))
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 4)
        for u in users { _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: u.id, originSocketId: nil) }
        let rowsSQL = "SELECT element_id, user_id, type, id, seq, created_at FROM reactions ORDER BY seq"
        let row: (Row) -> [String] = { r in (0..<6).map { i in i < 4 ? r.string(i) : String(r.int(i)) } }
        let before = try db.readSync { try $0.rows(rowsSQL, [], row) }
        XCTAssertEqual(before.count, 4)
        XCTAssertTrue(try indexedColumns(db).contains(["id"]), "before 0006 the id has its own index")

        try FileManager.default.copyItem(at: source.appendingPathComponent(ours), to: dir.appendingPathComponent(ours))
        XCTAssertEqual(try Migrator(directory: dir.path).migrate(db).count, 1)

        XCTAssertEqual(try db.readSync { try $0.rows(rowsSQL, [], row) }, before, "every reaction kept, with its id, order and time")
        XCTAssertEqual(try indexedColumns(db), [["element_id", "seq", "user_id"], ["user_id"]],
                       "only the indexes that serve a query remain")
        // The reactions page's cursor finds its row through the primary key (element first).
        let plan = try db.readSync { try $0.rows("EXPLAIN QUERY PLAN SELECT seq, user_id FROM reactions WHERE id = ? AND element_id = ?",
                                                 [.text("x"), .text("y")]) { $0.string(3) } }
        XCTAssertTrue(plan.contains { $0.contains("PRIMARY KEY") }, "plan: \(plan)")
        let page = try await domain.reactions.list(roomId: room, elementId: element, viewer: users[0].id, limit: 2, before: nil)
        let next = try await domain.reactions.list(roomId: room, elementId: element, viewer: users[0].id, limit: 2,
                                                   before: page.reactions.last?.id)
        XCTAssertEqual((page.reactions + next.reactions).map(\.id), before.reversed().map { $0[3] }, "newest first, across the cursor")
        // The toggle still removes and adds its row through the primary key.
        let removed = try await domain.reactions.toggle(roomId: room, elementId: element, actor: users[1].id, originSocketId: nil)
        XCTAssertEqual(removed.action, .removed)
        XCTAssertEqual(removed.stats.totalReactions, 3)
        let added = try await domain.reactions.toggle(roomId: room, elementId: element, actor: users[1].id, originSocketId: nil)
        XCTAssertEqual(added.action, .added)
        XCTAssertEqual(added.stats.totalReactions, 4)
        XCTAssertEqual(try db.readSync { try $0.scalarString("PRAGMA integrity_check") }, "ok")
    }

    /// The same on PostgreSQL: no index on `reactions(id)` after the migrations; the toggle and the
    /// page's cursor work. Skips visibly without TOUCHSYNC_TEST_POSTGRES_URL (scripts/test starts one).
    func testPostgresHasNoIdIndexAfterTheMigrations() async throws {
        let db = try Database(url: try makePostgresDatabaseURL())
        defer { db.close() }
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(db)
        let definitions = try db.readSync { try $0.rows("SELECT indexdef FROM pg_indexes WHERE tablename = 'reactions' ORDER BY indexname") { $0.string(0) } }
        XCTAssertFalse(definitions.contains { $0.hasSuffix("(id)") }, "indexes: \(definitions)")
        XCTAssertEqual(definitions.count, 3, "the primary key, by element and seq, by user: \(definitions)")
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), logger: Logger(label: "test"))
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 3)
        for u in users { _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: u.id, originSocketId: nil) }
        let page = try await domain.reactions.list(roomId: room, elementId: element, viewer: users[0].id, limit: 2, before: nil)
        let next = try await domain.reactions.list(roomId: room, elementId: element, viewer: users[0].id, limit: 2,
                                                   before: page.reactions.last?.id)
        XCTAssertEqual(Set((page.reactions + next.reactions).map(\.userId)), Set(users.map(\.id)))
        await domain.notifications.stop()
    }

    /// The columns of each index on `reactions` (SQLite), sorted.
    private func indexedColumns(_ db: Database) throws -> [[String]] {
        try db.readSync { c in
            let names = try c.rows("SELECT name FROM pragma_index_list('reactions') WHERE origin <> 'pk'") { $0.string(0) }
            return try names.map { name in
                try c.rows("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)]) { $0.string(0) }
            }.sorted { $0.joined(separator: ",") < $1.joined(separator: ",") }
        }
    }
}
