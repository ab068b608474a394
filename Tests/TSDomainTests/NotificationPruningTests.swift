import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import TSSync
import XCTest

/// Delivered notifications are pruned past the retention and beyond each feed's
/// cap, in batches; undelivered ones are never removed.
final class NotificationPruningTests: XCTestCase {
    /// Wall time the test sets.
    final class ManualClock: WallClock, @unchecked Sendable {
        // Invariant: `now` is only touched while holding `lock`.
        private let lock = Mutex()
        private var now: Int64 = 1_800_000_000
        func set(_ t: Int64) { lock.withLock { now = t } }
        func nowSeconds() -> Int64 { lock.withLock { now } }
        func nowMicroseconds() -> Int64 { nowSeconds() * 1_000_000 }
    }

    struct Silent: NotificationDelivery { func deliver(_ n: NotificationRecord, deviceTokens: [String]) async {} }

    var db: Database!
    var domain: TouchSyncDomain!
    let clock = ManualClock()

    override func setUp() async throws {
        db = try Database(path: ":memory:", logger: Logger(label: "test"))
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(db)
        domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                 events: RecordingEventPublisher(), delivery: Silent(), clock: clock, logger: Logger(label: "test"))
        // Delivery only when the test drains, so it decides what is delivered.
        await domain.notifications.stop()
    }

    override func tearDown() { db.close() }

    func count(_ sql: String) throws -> Int64 { try db.readSync { try $0.scalarInt(sql) } ?? -1 }

    func deliverAll() async throws { while try await domain.notifications.drainBatch() > 0 {} }

    /// `n` hearts from `fan` on `element` (add + remove each: one notification row per add).
    func hearts(_ n: Int, room: String, element: String, fan: String) async throws {
        for _ in 0..<n {
            _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: fan, originSocketId: nil)
            _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: fan, originSocketId: nil)
        }
    }

    func testRetentionRemovesOnlyDeliveredRowsPastIt() async throws {
        let alice = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let bob = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let room = try await domain.rooms.create(actor: alice.id, input: Input(["memberIds": [.string(bob.id)]]))
        let element = try await domain.elements.create(roomId: room.id, actor: alice.id,
                                                       input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]), originSocketId: nil)
        let t0: Int64 = 1_800_000_000
        clock.set(t0)
        try await hearts(30, room: room.id, element: element.id, fan: bob.id)
        try await deliverAll()
        clock.set(t0 + 10 * 86_400)
        try await hearts(10, room: room.id, element: element.id, fan: bob.id)  // newer, and not delivered
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications"), 40)

        let retention = NotificationRetention(retention: .seconds(5 * 86_400), maxPerFeed: 0, batchSize: 7)
        let pruned = try await domain.notifications.prune(retention)
        XCTAssertEqual(pruned.expired, 31, "the 30 delivered hearts and the element's creation, older than 5 days")
        XCTAssertEqual(pruned.overCap, 0)
        XCTAssertGreaterThanOrEqual(pruned.batches, 5, "30 rows in batches of 7")
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications"), 10, "the undelivered rows stay")
        XCTAssertEqual(try count("SELECT COUNT(*) FROM room_notifications"), 0)

        // Even far past the retention, an undelivered row is never pruned.
        clock.set(t0 + 100 * 86_400)
        let again = try await domain.notifications.prune(retention)
        XCTAssertEqual(again.expired, 0)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications"), 10)
        // Delivered, they go.
        try await deliverAll()
        let last = try await domain.notifications.prune(retention)
        XCTAssertEqual(last.expired, 10)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications"), 0)
        let listed = try await domain.notifications.list(userId: alice.id, limit: 50)
        XCTAssertEqual(listed.count, 0)
    }

    func testTheCapKeepsTheNewestDeliveredRowsOfEachFeed() async throws {
        let alice = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let bob = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let carol = try await domain.auth.createUser(username: "carol", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let room = try await domain.rooms.create(actor: alice.id, input: Input(["memberIds": [.string(bob.id), .string(carol.id)]]))
        let note = Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1])
        let aliceElement = try await domain.elements.create(roomId: room.id, actor: alice.id, input: note, originSocketId: nil)
        let carolElement = try await domain.elements.create(roomId: room.id, actor: carol.id, input: note, originSocketId: nil)
        for i in 0..<6 {  // six more creations: the room feed has 8 rows
            clock.set(1_800_000_000 + Int64(i))
            _ = try await domain.elements.create(roomId: room.id, actor: bob.id, input: note, originSocketId: nil)
        }
        try await hearts(12, room: room.id, element: aliceElement.id, fan: bob.id)   // alice: 12 rows
        try await hearts(2, room: room.id, element: carolElement.id, fan: bob.id)    // carol: 2 rows
        try await deliverAll()
        try await hearts(5, room: room.id, element: aliceElement.id, fan: bob.id)    // alice: 5 more, undelivered
        let newestAlice = try db.readSync { c in
            try c.rows("SELECT id FROM notifications WHERE user_id = ? ORDER BY seq DESC LIMIT 3", [.text(alice.id)]) { $0.string(0) }
        }

        let retention = NotificationRetention(retention: .zero, maxPerFeed: 3, batchSize: 4)
        let first = try await domain.notifications.prune(retention)
        // alice: 17 rows, the newest 5 undelivered: all 12 delivered ones are past her cap of 3,
        // and the 5 undelivered stay even though they exceed it. carol (2) is under the cap.
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications WHERE user_id = '\(alice.id)'"), 5)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications WHERE user_id = '\(carol.id)'"), 2)
        // The room feed: 8 rows, capped to the newest 3.
        XCTAssertEqual(try count("SELECT COUNT(*) FROM room_notifications"), 3)
        XCTAssertEqual(first.overCap, 12 + 5)
        XCTAssertEqual(first.expired, 0)

        try await deliverAll()
        _ = try await domain.notifications.prune(retention)
        let kept = try db.readSync { c in
            try c.rows("SELECT id FROM notifications WHERE user_id = ? ORDER BY seq DESC", [.text(alice.id)]) { $0.string(0) }
        }
        XCTAssertEqual(kept, newestAlice, "the cap keeps the newest rows")
        let listed = try await domain.notifications.list(userId: alice.id, limit: 50)
        XCTAssertEqual(listed.filter { $0.type == .elementReaction }.map(\.id), newestAlice)
    }

    /// The maintenance round (prune + checkpoint) a server runs on its timer.
    func testMaintenanceRoundPrunes() async throws {
        let alice = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let bob = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let room = try await domain.rooms.create(actor: alice.id, input: Input(["memberIds": [.string(bob.id)]]))
        let element = try await domain.elements.create(roomId: room.id, actor: alice.id,
                                                       input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]), originSocketId: nil)
        try await hearts(20, room: room.id, element: element.id, fan: bob.id)
        try await deliverAll()
        let maintenance = StorageMaintenance(db: db, notifications: domain.notifications,
                                             configuration: .init(retention: NotificationRetention(retention: .zero, maxPerFeed: 5)),
                                             logger: Logger(label: "test"))
        await maintenance.runOnce()
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications"), 5)
    }
}
