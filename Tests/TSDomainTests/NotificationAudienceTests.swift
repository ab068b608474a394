import Foundation
import TSDomain
import TSJSON
import TSStorage
import TSSync
import XCTest

/// Notifications of Migrations/0002: one row per change, the audience resolved on read and on
/// delivery, delivery tracked by a cursor.
final class NotificationAudienceTests: XCTestCase {
    final class Recorder: NotificationDelivery, @unchecked Sendable {
        // Invariant: `log` is only touched while holding `lock`.
        let lock = Mutex()
        var log: [(String, NotificationRecord.Kind)] = []
        func deliver(_ n: NotificationRecord, deviceTokens: [String]) async { lock.withLock { log.append((n.userId, n.type)) } }
        var deliveries: [(String, NotificationRecord.Kind)] { lock.withLock { log } }
    }

    func user(_ domain: TouchSyncDomain, _ name: String) async throws -> PublicUser {
        try await domain.auth.createUser(username: name, passwordHash: "x", firstName: nil, avatarUrl: nil)
    }

    func note() -> Input { Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]) }

    func testAudienceIsTheOtherMembersWhoJoinedBeforeTheElement() async throws {
        let (db, _) = try DomainFixture.make()
        defer { db.close() }
        let recorder = Recorder()
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), delivery: recorder, clock: SteppingClock(), logger: .init(label: "test"))
        let a = try await user(domain, "alice"), b = try await user(domain, "bob"), c = try await user(domain, "carol")
        let room = try await domain.rooms.create(actor: a.id, input: Input(["memberIds": [.string(b.id)]]))
        let element = try await domain.elements.create(roomId: room.id, actor: a.id, input: note(), originSocketId: nil)
        _ = try await domain.rooms.addMember(roomId: room.id, actor: a.id, input: Input(["userId": .string(c.id)]))

        do { let listed = try await domain.notifications.list(userId: b.id, limit: 10); XCTAssertEqual(listed.map(\.elementId), [element.id]) }
        do { let listed = try await domain.notifications.list(userId: a.id, limit: 10); XCTAssertEqual(listed.count, 0, "never the actor") }
        do { let listed = try await domain.notifications.list(userId: c.id, limit: 10); XCTAssertEqual(listed.count, 0, "not a member yet when it happened") }

        // A heart from bob: one personal notification for alice.
        _ = try await domain.reactions.toggle(roomId: room.id, elementId: element.id, actor: b.id, originSocketId: nil)
        do { let listed = try await domain.notifications.list(userId: a.id, limit: 10); XCTAssertEqual(listed.map(\.type), [.elementReaction]) }

        // The worker was woken by each change and delivers in the background.
        let deadline = Date().addingTimeInterval(5)
        while recorder.deliveries.count < 2 && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        XCTAssertEqual(Set(recorder.deliveries.map { "\($0.0):\($0.1.rawValue)" }),
                       ["\(b.id):element_created", "\(a.id):element_reaction"])
        // The worker hands rows over before it moves the cursor: let its drain finish first.
        await domain.notifications.stop()
        let again = try await domain.notifications.drainBatch()
        XCTAssertEqual(again, 0, "the cursor moved: nothing is delivered twice")
        do { let listed = try await domain.notifications.list(userId: b.id, limit: 10); XCTAssertEqual(listed.first?.delivered, true) }

        try await domain.rooms.leave(roomId: room.id, actor: b.id)
        do { let listed = try await domain.notifications.list(userId: b.id, limit: 10); XCTAssertEqual(listed.count, 0, "a room's notifications follow membership") }
    }

    func testACreationInAHundredMemberRoomWritesOneRow() async throws {
        let (db, domain) = try DomainFixture.make()
        defer { db.close() }
        var members: [JSONValue] = []
        let owner = try await user(domain, "owner")
        for i in 0..<99 { members.append(.string(try await user(domain, "member\(i)").id)) }
        let room = try await domain.rooms.create(actor: owner.id, input: Input(["memberIds": .array(members)]))
        _ = try await domain.elements.create(roomId: room.id, actor: owner.id, input: note(), originSocketId: nil)
        let rows = try db.readSync { c in
            (try c.scalarInt("SELECT COUNT(*) FROM room_notifications") ?? -1, try c.scalarInt("SELECT COUNT(*) FROM notifications") ?? -1)
        }
        XCTAssertEqual(rows.0, 1)
        XCTAssertEqual(rows.1, 0)
    }
}

/// Wall time that advances one second per reading, so "joined after the element" is strict.
final class SteppingClock: WallClock, @unchecked Sendable {
    // Invariant: `now` is only touched while holding `lock`.
    private let lock = Mutex()
    private var now: Int64 = 1_800_000_000
    func nowSeconds() -> Int64 { lock.withLock { now += 1; return now } }
    func nowMicroseconds() -> Int64 { nowSeconds() * 1_000_000 }
}
