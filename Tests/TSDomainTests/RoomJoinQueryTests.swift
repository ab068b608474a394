import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// What `room:join` asks of the database (`elements.list`, then `rooms.markElementsSeen`),
/// counted on the writer connection (in-memory, reads run there too, so its statement counter
/// sees every query): a fixed number of statements whatever the number of reacted elements.
final class RoomJoinQueryTests: XCTestCase {
    var db: Database!
    var domain: TouchSyncDomain!

    override func setUp() async throws {
        (db, domain) = try DomainFixture.make()
    }

    override func tearDown() { db.close() }

    func executed(_ body: () async throws -> Void) async throws -> Int {
        let before = try db.withWriterConnection { $0.statementsExecuted }
        try await body()
        return try db.withWriterConnection { $0.statementsExecuted } - before
    }

    /// Membership, the elements, the viewer's hearts, every element's top reactors, the seen
    /// marker: five statements for twenty reacted elements (one query per reacted element, and
    /// a marker that re-checked membership and read the room, made it 26).
    func testJoinIsFiveStatementsWhateverTheNumberOfReactedElements() async throws {
        let (users, room) = try await seedRoom(domain, reactedElements: 20, plainElements: 3)
        await domain.notifications.stop()
        let viewer = users[0].id
        let unseenBefore = try await domain.rooms.myRooms(viewer: viewer).first?.unseenElements ?? 0
        XCTAssertGreaterThan(unseenBefore, 0, "the others' elements are unseen")
        var listed: [Element] = []
        let statements = try await executed {
            listed = try await domain.elements.list(roomId: room, viewer: viewer)
            try await domain.rooms.markElementsSeen(roomId: room, actor: viewer)
        }
        XCTAssertEqual(statements, 5)
        XCTAssertEqual(listed.count, 23)
        XCTAssertEqual(listed.filter { $0.reactions != nil }.count, 20)
        let unseenAfter = try await domain.rooms.myRooms(viewer: viewer).first?.unseenElements
        XCTAssertEqual(unseenAfter, 0)
        try await assertTopReactorsMatchOneElementReads(domain, room: room, viewer: viewer, listed: listed)
    }

    func testMarkElementsSeenRefusesNonMembersAndUnknownRooms() async throws {
        let (_, room) = try await seedRoom(domain, reactedElements: 1, plainElements: 0)
        let outsider = try await domain.auth.createUser(username: "outsider", passwordHash: "x", firstName: nil, avatarUrl: nil)
        do {
            try await domain.rooms.markElementsSeen(roomId: room, actor: outsider.id)
            XCTFail("a non-member cannot mark a room seen")
        } catch DomainError.forbidden {}
        do {
            try await domain.rooms.markElementsSeen(roomId: "no-such-room", actor: outsider.id)
            XCTFail("an unknown room is not found")
        } catch DomainError.notFound {}
    }
}

/// A room of four members with `reactedElements` elements hearted by one to four of them (in an
/// order that differs from element to element) and `plainElements` without hearts.
func seedRoom(_ domain: TouchSyncDomain, reactedElements: Int, plainElements: Int) async throws -> (users: [PublicUser], room: String) {
    var users: [PublicUser] = []
    for i in 0..<4 { users.append(try await domain.auth.createUser(username: "member\(i)", passwordHash: "x", firstName: nil, avatarUrl: nil)) }
    let room = try await domain.rooms.create(actor: users[0].id, input: Input(["memberIds": .array(users.map { .string($0.id) })])).id
    for i in 0..<(reactedElements + plainElements) {
        let author = users[i % users.count].id
        let element = try await domain.elements.create(roomId: room, actor: author, input: Input(["type": "note", "positionX": .int(Int64(i)),
                                                                                               "positionY": 0, "width": 1, "height": 1]),
                                                       originSocketId: nil)
        guard i < reactedElements else { continue }
        for k in 0...(i % users.count) {
            let reactor = users[(i + k * 3) % users.count].id
            _ = try await domain.reactions.toggle(roomId: room, elementId: element.id, actor: reactor, originSocketId: nil)
        }
        if i % 5 == 4 {  // a heart taken back and given again moves to the front
            let again = users[i % users.count].id
            _ = try await domain.reactions.toggle(roomId: room, elementId: element.id, actor: again, originSocketId: nil)
            _ = try await domain.reactions.toggle(roomId: room, elementId: element.id, actor: again, originSocketId: nil)
        }
    }
    return (users, room)
}

/// Every element of the room's list carries the reactions a one-element read (one query per
/// element, newest heart first) gives, and its top reactors are the first three of the element's
/// reaction list.
func assertTopReactorsMatchOneElementReads(_ domain: TouchSyncDomain, room: String, viewer: String, listed: [Element],
                                           file: StaticString = #filePath, line: UInt = #line) async throws {
    for e in listed {
        let one = try await domain.elements.element(roomId: room, elementId: e.id, viewer: viewer)
        XCTAssertEqual(e.reactions, one?.reactions, "element \(e.id)", file: file, line: line)
        let page = try await domain.reactions.list(roomId: room, elementId: e.id, viewer: viewer, limit: 50, before: nil)
        XCTAssertEqual(e.reactions?.topReactors.map(\.id) ?? [], Array(page.reactions.prefix(3).map(\.userId)), file: file, line: line)
        XCTAssertEqual(e.reactions?.count ?? 0, page.total, file: file, line: line)
    }
}
