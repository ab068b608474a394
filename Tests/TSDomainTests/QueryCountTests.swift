import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// The "computed in one query" claims of docs/api.md, counted: in-memory, reads run on the writer
/// connection, so its statement counter sees every query a service issues.
final class QueryCountTests: DomainTestCase {
    func testMyRoomsIsOneQueryWhateverTheNumberOfRooms() async throws {
        let a = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let b = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        for i in 0..<50 {
            let r = try await domain.rooms.create(actor: a.id, input: Input(["memberIds": [.string(b.id)], "name": .string("room \(i)")]))
            _ = try await domain.elements.create(roomId: r.id, actor: b.id, input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                                 originSocketId: nil)
        }
        // The notification worker drains in the background on the same (in-memory) connection:
        // let it finish so only my-rooms' statements are counted.
        await domain.notifications.stop()
        var rooms: [Room] = []
        let myRoomsQueries = try await executed { rooms = try await domain.rooms.myRooms(viewer: a.id) }
        XCTAssertEqual(myRoomsQueries, 1)
        XCTAssertEqual(rooms.count, 50)
        XCTAssertTrue(rooms.allSatisfy { $0.elementCount == 1 && $0.unseenElements == 1 })
    }

    func testInteractionStateIsOneQueryForFiftyPosts() async throws {
        let a = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        var ids: [String] = []
        for i in 0..<50 { ids.append(try await domain.posts.create(actor: a.id, input: Input(["content": .string("p\(i)")])).id) }
        for id in ids.prefix(20) { _ = try await domain.posts.set(.like, on: true, postId: id, actor: a.id) }
        await domain.notifications.stop()
        var states: PostService.InteractionStates!
        let statesQueries = try await executed { states = try await domain.posts.interactionStates(postIds: ids, viewer: a.id) }
        XCTAssertEqual(statesQueries, 1)
        XCTAssertEqual(states.interactions.count, 50)
        XCTAssertEqual(states.interactions.filter(\.isLiked).count, 20)
    }

    // MARK: room:join (`elements.join`: one write that reads the room and marks it seen)

    /// Membership, the room's event number (read under its row lock: the batch's place in the
    /// room's order), the elements, the viewer's hearts, every element's top reactors, the seen
    /// marker: six statements for twenty reacted elements (one query per reacted element, and
    /// a marker that re-checked membership and read the room, made it 26).
    func testJoinIsSixStatementsWhateverTheNumberOfReactedElements() async throws {
        let (users, room) = try await seedRoom(domain, reactedElements: 20, plainElements: 3)
        await domain.notifications.stop()
        let viewer = users[0].id
        let unseenBefore = try await domain.rooms.myRooms(viewer: viewer).first?.unseenElements ?? 0
        XCTAssertGreaterThan(unseenBefore, 0, "the others' elements are unseen")
        var listed: [Element] = []
        let statements = try await executed {
            listed = try await domain.elements.join(roomId: room, viewer: viewer) { _ in }
        }
        XCTAssertEqual(statements, 6)
        XCTAssertEqual(listed.count, 23)
        XCTAssertEqual(listed.filter { $0.reactions != nil }.count, 20)
        let unseenAfter = try await domain.rooms.myRooms(viewer: viewer).first?.unseenElements
        XCTAssertEqual(unseenAfter, 0)
        try await assertTopReactorsMatchOneElementReads(domain, room: room, viewer: viewer, listed: listed)
    }

    func testJoinRefusesNonMembersAndUnknownRooms() async throws {
        let (_, room) = try await seedRoom(domain, reactedElements: 1, plainElements: 0)
        let outsider = try await domain.auth.createUser(username: "outsider", passwordHash: "x", firstName: nil, avatarUrl: nil)
        do {
            _ = try await domain.elements.join(roomId: room, viewer: outsider.id) { _ in XCTFail("no delivery for a refused join") }
            XCTFail("a non-member cannot join a room")
        } catch DomainError.forbidden {}
        do {
            _ = try await domain.elements.join(roomId: "no-such-room", viewer: outsider.id) { _ in XCTFail("no delivery for a refused join") }
            XCTFail("an unknown room is not found")
        } catch DomainError.notFound {}
    }

    /// Notifications are written in the transaction of the change: when writing them fails, the
    /// element is not stored either (and the counters are untouched).
    func testNotificationsShareTheTransactionOfTheChange() async throws {
        let a = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let b = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let room = try await domain.rooms.create(actor: a.id, input: Input(["memberIds": [.string(b.id)]]))
        try await db.write { c in
            try c.executeScript("CREATE TRIGGER fail_notifications BEFORE INSERT ON room_notifications BEGIN SELECT RAISE(ABORT, 'injected'); END;")
        }
        do {
            _ = try await domain.elements.create(roomId: room.id, actor: a.id, input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                                 originSocketId: nil)
            XCTFail("the injected failure must surface")
        } catch {}
        let listed = try await domain.elements.list(roomId: room.id, viewer: a.id)
        XCTAssertEqual(listed.count, 0, "the element rolled back with its notification")
        let bobs = try await domain.rooms.myRooms(viewer: b.id)
        XCTAssertEqual(bobs.first?.elementCount, 0)
        XCTAssertEqual(bobs.first?.unseenElements, 0)
    }
}
