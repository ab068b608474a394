import TSDomain
import XCTest

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
