import Foundation
import Logging
import TSCrypto
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// Runs every service once against a migrated database with enough rows that a missing index
/// would show, then asks SQLite whether any statement stepped through a whole table
/// (`SQLITE_STMTSTATUS_FULLSCAN_STEP`). In-memory, reads go through the writer connection, so
/// one statement cache sees every query the services ran.
final class QueryPlanTests: XCTestCase {
    func testNoServiceQueryScansAWholeTable() async throws {
        let (db, domain) = try DomainFixture.make()
        var users: [PublicUser] = []
        for i in 0..<8 {
            users.append(try await domain.auth.createUser(username: "user\(i)", passwordHash: await domain.auth.hashPassword("password-\(i)"),
                                                          firstName: nil, avatarUrl: nil))
        }
        _ = try await domain.auth.register(Input(["username": "registered", "password": "password-123"]))
        _ = try await domain.auth.login(Input(["username": "registered", "password": "password-123"]))
        var rooms: [Room] = []
        for owner in users.prefix(4) {
            rooms.append(try await domain.rooms.create(actor: owner.id, input: Input(["memberIds": .array(users.map { .string($0.id) })])))
        }
        var elements: [(String, String)] = []
        for room in rooms {
            for (i, u) in users.enumerated() {
                let e = try await domain.elements.create(roomId: room.id, actor: u.id, input: Input(["type": "note", "positionX": .int(Int64(i)),
                                                                                                      "positionY": 0, "width": 1, "height": 1]), originSocketId: nil)
                elements.append((room.id, e.id))
            }
        }
        for (room, el) in elements.prefix(10) {
            for u in users.prefix(5) { _ = try await domain.reactions.toggle(roomId: room, elementId: el, actor: u.id, originSocketId: nil) }
        }
        let (room0, el0) = elements[0]
        let viewer = users[0].id
        _ = try await domain.rooms.myRooms(viewer: viewer)
        _ = try await domain.rooms.detail(roomId: room0, viewer: viewer)
        _ = try await domain.rooms.rename(roomId: room0, actor: viewer, input: Input(["name": "renamed"]), originSocketId: nil)
        _ = try await domain.rooms.markSeen(roomId: room0, actor: viewer)
        _ = try await domain.rooms.markMessagesRead(roomId: room0, actor: viewer)
        _ = try await domain.rooms.memberIds(roomId: room0)
        _ = try await domain.rooms.isMember(roomId: room0, userId: viewer)
        _ = try await domain.elements.list(roomId: room0, viewer: viewer)
        _ = try await domain.elements.update(roomId: room0, elementId: el0, actor: viewer, input: Input(["positionX": 5]), originSocketId: nil)
        // The broadcaster's reads (RecipientReads), one per event that needs them.
        let recipients = DatabaseRecipientReads(db: db)
        _ = try await recipients.heartedBy(elementId: el0)
        _ = try await recipients.rooms(roomId: room0, viewers: users.map(\.id))
        let page = try await domain.reactions.list(roomId: room0, elementId: el0, viewer: viewer, limit: 2, before: nil)
        _ = try await domain.reactions.list(roomId: room0, elementId: el0, viewer: viewer, limit: 2, before: page.reactions.last?.id)
        for i in 0..<5 { _ = try await domain.messages.send(roomId: room0, actor: users[i].id, input: Input(["text": .string("m\(i)")]), originSocketId: nil) }
        let msgs = try await domain.messages.list(roomId: room0, viewer: viewer, limit: 2, before: nil)
        _ = try await domain.messages.list(roomId: room0, viewer: viewer, limit: 2, before: msgs.last?.id)
        var posts: [String] = []
        for i in 0..<20 { posts.append(try await domain.posts.create(actor: users[i % 8].id, input: Input(["content": .string("p\(i)")])).id) }
        for p in posts.prefix(10) {
            _ = try await domain.posts.set(.like, on: true, postId: p, actor: viewer)
            _ = try await domain.posts.set(.save, on: true, postId: p, actor: viewer)
        }
        _ = try await domain.posts.set(.like, on: false, postId: posts[0], actor: viewer)
        _ = try await domain.posts.interactionStates(postIds: posts, viewer: viewer)
        _ = try await domain.devices.register(actor: viewer, input: Input(["token": "tok", "platform": "ios"]))
        try await domain.notifications.drainBatch()
        _ = try await domain.notifications.list(userId: viewer, limit: 10)
        try await domain.devices.unregister(actor: viewer, token: "tok")
        try await domain.elements.delete(roomId: room0, elementId: el0, actor: viewer, originSocketId: nil)
        _ = try await domain.elements.clear(roomId: rooms[1].id, actor: viewer, originSocketId: nil)
        try await domain.rooms.leave(roomId: room0, actor: users[7].id)
        _ = try await domain.rooms.addMember(roomId: room0, actor: viewer, input: Input(["username": "user7"]))

        let scans = try db.withWriterConnection { c in c.statementsWithFullTableScans() }
        XCTAssertGreaterThan(try db.withWriterConnection { c in c.cachedStatementCount }, 30, "the workload ran the services' queries")
        XCTAssertTrue(scans.isEmpty, "queries that scan a whole table:\n" + scans.map { "\($0.steps) steps: \($0.sql)" }.joined(separator: "\n"))
    }
}
