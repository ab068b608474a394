import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// No query uses SQLite's `rowid`; creation order is the explicit `seq` column
/// of Migrations/0005 (TSDomain's `SequenceSource`), which keeps the order of rows that existed
/// before the migration.
final class ExplicitOrderTests: XCTestCase {
    /// A clock stuck on one second and one microsecond: every row gets the same `created_at`, so
    /// only `seq` can order them.
    struct FrozenClock: WallClock {
        func nowSeconds() -> Int64 { 1_700_000_000 }
        func nowMicroseconds() -> Int64 { 1_700_000_000_000_000 }
    }

    func makeDomain(clock: any WallClock) throws -> (Database, TouchSyncDomain) {
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(db)
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), clock: clock, logger: Logger(label: "test"))
        return (db, domain)
    }

    func testSequenceIsStrictlyIncreasingWhenTheClockStandsStillOrGoesBack() {
        final class Steps: WallClock, @unchecked Sendable {
            // Invariant: only used from this test's thread.
            var values: [Int64] = [100, 100, 50, 200]
            func nowSeconds() -> Int64 { 0 }
            func nowMicroseconds() -> Int64 { values.removeFirst() }
        }
        let source = SequenceSource(clock: Steps())
        XCTAssertEqual((0..<4).map { _ in source.next() }, [100, 101, 102, 200])
    }

    func testListingsKeepCreationOrderWithinOneSecond() async throws {
        let (db, domain) = try makeDomain(clock: FrozenClock())
        defer { db.close() }
        var users: [PublicUser] = []
        for name in ["alice", "bob", "carol", "dave", "erin"] {
            users.append(try await domain.auth.createUser(username: name, passwordHash: "x", firstName: nil, avatarUrl: nil))
        }
        let room = try await domain.rooms.create(actor: users[0].id, input: Input(["memberIds": .array(users.map { .string($0.id) })]))
        var elements: [String] = []
        for i in 0..<12 {
            elements.append(try await domain.elements.create(roomId: room.id, actor: users[i % 5].id,
                                                             input: Input(["type": "note", "positionX": .int(Int64(i)), "positionY": 0, "width": 1, "height": 1]),
                                                             originSocketId: nil).id)
        }
        let listed = try await domain.elements.list(roomId: room.id, viewer: users[0].id)
        XCTAssertEqual(listed.map(\.id), elements, "oldest first, in creation order, although every created_at is equal")

        var messages: [String] = []
        for i in 0..<7 {
            messages.append(try await domain.messages.send(roomId: room.id, actor: users[i % 5].id, input: Input(["text": .string("m\(i)")]),
                                                           originSocketId: nil).id)
        }
        var paged: [String] = []
        var before: String? = nil
        repeat {
            let page = try await domain.messages.list(roomId: room.id, viewer: users[0].id, limit: 3, before: before)
            paged += page.map(\.id)
            before = page.count == 3 ? page.last?.id : nil
        } while before != nil
        XCTAssertEqual(paged, messages.reversed(), "newest first across pages, no message skipped or repeated")

        for u in users { _ = try await domain.reactions.toggle(roomId: room.id, elementId: elements[0], actor: u.id, originSocketId: nil) }
        var reactors: [String] = []
        before = nil
        repeat {
            let page = try await domain.reactions.list(roomId: room.id, elementId: elements[0], viewer: users[0].id, limit: 2, before: before)
            reactors += page.reactions.map(\.userId)
            XCTAssertEqual(page.total, 5)
            before = page.reactions.count == 2 ? page.reactions.last?.id : nil
        } while before != nil
        XCTAssertEqual(reactors, users.map(\.id).reversed(), "reactions newest first across pages")
        let stats = try await domain.elements.element(roomId: room.id, elementId: elements[0], viewer: users[0].id)?.reactions
        XCTAssertEqual(stats?.topReactors.map(\.id), users.suffix(3).map(\.id).reversed())
    }

    /// Rows written before Migrations/0005 get `seq = rowid`: the order they had is kept, and
    /// rows created after the migration come after them.
    func testMigrationKeepsTheOrderOfExistingRows() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("order-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let all = try FileManager.default.contentsOfDirectory(atPath: DomainFixture.migrationsDirectory).filter { $0.hasSuffix(".sql") }.sorted()
        let source = URL(fileURLWithPath: DomainFixture.migrationsDirectory)
        for f in all where f < "0005" { try FileManager.default.copyItem(at: source.appendingPathComponent(f), to: dir.appendingPathComponent(f)) }
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        defer { db.close() }
        try Migrator(directory: dir.path).migrate(db)
        // The old schema, filled the way the old code did (rowid order = creation order), with
        // created_at going backwards so that only the rowid tells the order.
        try db.writeSync { c in
            try c.run("INSERT INTO users (id, username, password_hash, created_at) VALUES ('u1', 'alice', 'x', 10), ('u2', 'bob', 'x', 10)")
            try c.run("""
                INSERT INTO rooms (id, name, created_by, created_at, updated_at, last_activity_at) VALUES ('r1', 'room', 'u1', 10, 10, 10)
                """)
            try c.run("""
                INSERT INTO room_members (room_id, user_id, joined_at, elements_seen_at, messages_read_at) VALUES ('r1', 'u1', 0, 0, 0), ('r1', 'u2', 0, 0, 0)
                """)
            for (i, id) in ["ez", "ea", "em"].enumerated() {
                try c.run("""
                    INSERT INTO elements (id, room_id, type, position_x, position_y, width, height, created_by, created_at, updated_at, reaction_count)
                    VALUES (?, 'r1', 'note', 0, 0, 1, 1, 'u1', ?, ?, ?)
                    """, [.text(id), .int(Int64(20 - i)), .int(Int64(20 - i)), .int(id == "ez" ? 2 : 0)])
            }
            try c.run("INSERT INTO reactions (id, element_id, user_id, created_at) VALUES ('x2', 'ez', 'u2', 30), ('x1', 'ez', 'u1', 30)")
            try c.run("INSERT INTO messages (id, room_id, user_id, text, created_at) VALUES ('mz', 'r1', 'u1', 'first', 40), ('ma', 'r1', 'u2', 'second', 40)")
        }
        // 0005, and the migrations after it that today's domain code needs (0006: the reactions'
        // id index dropped, 0007: room event numbers).
        for name in ["0005_explicit_order_columns.sql", "0006_reactions_without_id_index.sql", "0007_room_event_numbers.sql"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        XCTAssertEqual(try Migrator(directory: dir.path).migrate(db).count, 3)
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), logger: Logger(label: "test"))
        let new = try await domain.elements.create(roomId: "r1", actor: "u2", input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                                   originSocketId: nil)
        let listed = try await domain.elements.list(roomId: "r1", viewer: "u1")
        XCTAssertEqual(listed.map(\.id), ["ez", "ea", "em", new.id])
        let page = try await domain.reactions.list(roomId: "r1", elementId: "ez", viewer: "u1", limit: 10, before: nil)
        XCTAssertEqual(page.reactions.map(\.id), ["x1", "x2"], "newest (last inserted) first")
        let messages = try await domain.messages.list(roomId: "r1", viewer: "u1", limit: 10, before: nil)
        XCTAssertEqual(messages.map(\.id), ["ma", "mz"])
        // The toggle finds the migrated rows through the new primary key.
        let removed = try await domain.reactions.toggle(roomId: "r1", elementId: "ez", actor: "u1", originSocketId: nil)
        XCTAssertEqual(removed.action, .removed)
        XCTAssertEqual(removed.reaction.id, "x1")
        XCTAssertEqual(removed.stats.totalReactions, 1)
        try db.readSync { c in
            XCTAssertEqual(try c.scalarInt("SELECT COUNT(*) FROM reactions"), 1)
            XCTAssertNil(try c.scalarInt("SELECT 1 FROM pragma_table_info('reactions') WHERE name = 'rowid'"))
        }
    }
}
