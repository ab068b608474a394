import Foundation
import TSJSON
import XCTest

/// Rooms, membership, MyRooms badges and messages (docs/api.md: Room, Rooms, Messages).
final class RoomsAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    func makeRoom(_ owner: TestUser, members: [TestUser] = [], name: String? = nil) async throws -> RoomDTO {
        var body: JSONObject = ["memberIds": .array(members.map { .string($0.id) })]
        if let name { body["name"] = .string(name) }
        let r = try await api.post("/api/rooms", .object(body), token: owner.token)
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(Set(r.json["data"]?.objectValue?.keys ?? []), ContractKeys.room)
        return try r.decode(DataEnvelope<RoomDTO>.self).data
    }

    func element(_ type: String = "note") -> JSONValue {
        ["type": .string(type), "positionX": 10, "positionY": 20.5, "width": 100, "height": 80]
    }

    func testCreateRoomDefaultNameAndRename() async throws {
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        let room = try await makeRoom(a, members: [b])
        XCTAssertNil(room.nameSetBy)
        XCTAssertNil(room.nameSetByUser)
        XCTAssertEqual(room.createdBy, a.id)
        // e.g. "Nov 22, 2026 10:04"
        XCTAssertNotNil(room.name.range(of: #"^[A-Z][a-z]{2} \d{1,2}, \d{4} \d{2}:\d{2}$"#, options: .regularExpression), room.name)
        XCTAssertEqual(room.elementCount, 0)
        XCTAssertEqual(room.badges, BadgesDTO(messages: 0, elements: 0))

        let renamed = try await api.patch("/api/rooms/\(room.id)", ["name": "Design Team"], token: b.token)
        XCTAssertEqual(renamed.status, 200)
        let r2 = try renamed.decode(DataEnvelope<RoomDTO>.self).data
        XCTAssertEqual(r2.name, "Design Team")
        XCTAssertEqual(r2.nameSetBy, b.id)
        XCTAssertEqual(r2.nameSetByUser?.username, "bob")

        let blank = try await api.patch("/api/rooms/\(room.id)", ["name": "   "], token: b.token)
        XCTAssertEqual(blank.status, 400)
        XCTAssertEqual(try blank.decode(ErrorEnvelope.self).error.field, "name")
    }

    func testNonMemberGets403AndUnknownRoom404() async throws {
        let a = try await api.register("alice")
        let stranger = try await api.register("stranger")
        let room = try await makeRoom(a)
        for (method, path) in [("GET", "/api/rooms/\(room.id)"), ("GET", "/api/rooms/\(room.id)/elements"),
                               ("POST", "/api/rooms/\(room.id)/seen"), ("GET", "/api/rooms/\(room.id)/messages")] {
            let r = try await api.send(method, path, token: stranger.token)
            XCTAssertEqual(r.status, 403, path)
            XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.code, "FORBIDDEN")
        }
        let create = try await api.post("/api/rooms/\(room.id)/elements", element(), token: stranger.token)
        XCTAssertEqual(create.status, 403)

        // Every route that changes a room is refused to a non-member (403, nothing changes), and
        // answers 404 for a room that does not exist.
        let elementId = try await api.post("/api/rooms/\(room.id)/elements", element(), token: a.token).decode(DataEnvelope<ElementDTO>.self).data.id
        func changes(_ roomId: String) -> [(String, String, JSONValue?)] {
            [("PATCH", "/api/rooms/\(roomId)", ["name": "hijacked"]),
             ("POST", "/api/rooms/\(roomId)/members", ["username": "stranger"]),
             ("PATCH", "/api/rooms/\(roomId)/elements/\(elementId)", ["positionX": 99]),
             ("POST", "/api/rooms/\(roomId)/elements/\(elementId)/reactions/toggle", nil),
             ("GET", "/api/rooms/\(roomId)/elements/\(elementId)/reactions", nil),
             ("POST", "/api/rooms/\(roomId)/messages", ["text": "hi"]),
             ("POST", "/api/rooms/\(roomId)/messages/read", nil),
             ("DELETE", "/api/rooms/\(roomId)/elements/\(elementId)", nil),
             ("DELETE", "/api/rooms/\(roomId)/elements", nil)]
        }
        for (method, path, body) in changes(room.id) {
            let r = try await api.send(method, path, json: body, token: stranger.token)
            XCTAssertEqual(r.status, 403, "\(method) \(path)")
            XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.code, "FORBIDDEN", "\(method) \(path)")
        }
        for (method, path, body) in changes("no-such-room") {
            let r = try await api.send(method, path, json: body, token: stranger.token)
            XCTAssertEqual(r.status, 404, "\(method) \(path)")
        }
        let untouched = try await api.get("/api/rooms/\(room.id)", token: a.token).decode(DataEnvelope<RoomDetailDTO>.self).data
        XCTAssertEqual(untouched.name, room.name)
        XCTAssertEqual(untouched.members.map(\.id), [a.id])
        XCTAssertEqual(untouched.elements.map(\.id), [elementId])
        XCTAssertEqual(untouched.elements.first?.positionX, 10)
        XCTAssertNil(untouched.elements.first?.reactions)
        let messages = try await api.get("/api/rooms/\(room.id)/messages", token: a.token).decode(DataEnvelope<[MessageDTO]>.self).data
        XCTAssertEqual(messages.count, 0)

        let missing = try await api.get("/api/rooms/00000000-0000-0000-0000-000000000000", token: a.token)
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(try missing.decode(ErrorEnvelope.self).error.code, "NOT_FOUND")
        let odd = try await api.get("/api/rooms/%27%20OR%201%3D1--", token: a.token)
        XCTAssertEqual(odd.status, 404)
        let myRooms = try await api.get("/api/rooms/my-rooms", token: stranger.token)
        XCTAssertEqual(try myRooms.decode(DataEnvelope<[RoomDTO]>.self).data.count, 0)
        let noToken = try await api.get("/api/rooms/my-rooms")
        XCTAssertEqual(noToken.status, 401)
    }

    func testMembersAddAndLeave() async throws {
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        let room = try await makeRoom(a)
        let add = try await api.post("/api/rooms/\(room.id)/members", ["username": "bob"], token: a.token)
        XCTAssertEqual(add.status, 201)
        let again = try await api.post("/api/rooms/\(room.id)/members", ["userId": .string(b.id)], token: a.token)
        XCTAssertEqual(again.status, 409)
        let ghost = try await api.post("/api/rooms/\(room.id)/members", ["username": "ghost"], token: a.token)
        XCTAssertEqual(ghost.status, 404)
        let detail = try await api.get("/api/rooms/\(room.id)", token: b.token)
        XCTAssertEqual(detail.status, 200)
        let d = try detail.decode(DataEnvelope<RoomDetailDTO>.self).data
        XCTAssertEqual(Set(d.members.map(\.username)), ["alice", "bob"])
        let leave = try await api.delete("/api/rooms/\(room.id)/members/me", token: b.token)
        XCTAssertEqual(leave.status, 200)
        let after = try await api.get("/api/rooms/\(room.id)", token: b.token)
        XCTAssertEqual(after.status, 403)
    }

    /// The badge arithmetic: B creates 3 elements → A's badge 3; A marks seen → 0;
    /// B deletes one → elementCount drops, the badge stays 0.
    func testBadgeArithmeticAcrossTwoUsers() async throws {
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        let room = try await makeRoom(a, members: [b])
        var ids: [String] = []
        for _ in 0..<3 {
            let r = try await api.post("/api/rooms/\(room.id)/elements", element(), token: b.token)
            XCTAssertEqual(r.status, 201)
            ids.append(try r.decode(DataEnvelope<ElementDTO>.self).data.id)
        }
        func mine(_ u: TestUser) async throws -> RoomDTO {
            let r = try await api.get("/api/rooms/my-rooms", token: u.token)
            XCTAssertEqual(Set(r.json["data"]?[0]?.objectValue?.keys ?? []), ContractKeys.room)
            return try XCTUnwrap(try r.decode(DataEnvelope<[RoomDTO]>.self).data.first { $0.id == room.id })
        }
        var ra = try await mine(a)
        XCTAssertEqual(ra.elementCount, 3)
        XCTAssertEqual(ra.badges.elements, 3)
        XCTAssertTrue(ra.hasUnread)
        let rb = try await mine(b)
        XCTAssertEqual(rb.badges.elements, 0, "own elements are not unseen")

        let seen = try await api.post("/api/rooms/\(room.id)/seen", token: a.token)
        XCTAssertEqual(seen.status, 200)
        ra = try await mine(a)
        XCTAssertEqual(ra.badges.elements, 0)
        XCTAssertFalse(ra.hasUnread)

        let del = try await api.delete("/api/rooms/\(room.id)/elements/\(ids[0])", token: b.token)
        XCTAssertEqual(del.status, 200)
        XCTAssertEqual(del.json["data"]?["id"]?.stringValue, ids[0])
        ra = try await mine(a)
        XCTAssertEqual(ra.elementCount, 2)
        XCTAssertEqual(ra.badges.elements, 0)

        // Messages feed badges.messages; reading resets it.
        let m = try await api.post("/api/rooms/\(room.id)/messages", ["text": "hi"], token: b.token)
        XCTAssertEqual(m.status, 201)
        XCTAssertEqual(Set(m.json["data"]?.objectValue?.keys ?? []), ContractKeys.message)
        _ = try m.decode(DataEnvelope<MessageDTO>.self)
        ra = try await mine(a)
        XCTAssertEqual(ra.badges.messages, 1)
        XCTAssertTrue(ra.hasUnread)
        _ = try await api.post("/api/rooms/\(room.id)/messages/read", token: a.token)
        ra = try await mine(a)
        XCTAssertEqual(ra.badges.messages, 0)
    }

    func testMyRoomsMostRecentlyActiveFirst() async throws {
        let a = try await api.register("alice")
        let first = try await makeRoom(a, name: "first")
        let second = try await makeRoom(a, name: "second")
        var rooms = try await api.get("/api/rooms/my-rooms", token: a.token).decode(DataEnvelope<[RoomDTO]>.self).data
        XCTAssertEqual(rooms.map(\.id), [second.id, first.id])
        _ = try await api.post("/api/rooms/\(first.id)/elements", element(), token: a.token)
        rooms = try await api.get("/api/rooms/my-rooms", token: a.token).decode(DataEnvelope<[RoomDTO]>.self).data
        XCTAssertEqual(rooms.map(\.id), [first.id, second.id])
    }

    func testMessagesPaginateNewestFirst() async throws {
        let a = try await api.register("alice")
        let room = try await makeRoom(a)
        for i in 0..<5 { _ = try await api.post("/api/rooms/\(room.id)/messages", ["text": .string("m\(i)")], token: a.token) }
        let page1 = try await api.get("/api/rooms/\(room.id)/messages?limit=2", token: a.token).decode(DataEnvelope<[MessageDTO]>.self).data
        XCTAssertEqual(page1.map(\.text), ["m4", "m3"])
        let page2 = try await api.get("/api/rooms/\(room.id)/messages?limit=2&before=\(page1[1].id)", token: a.token)
            .decode(DataEnvelope<[MessageDTO]>.self).data
        XCTAssertEqual(page2.map(\.text), ["m2", "m1"])
        let bad = try await api.get("/api/rooms/\(room.id)/messages?limit=0", token: a.token)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(try bad.decode(ErrorEnvelope.self).error.field, "limit")
        let empty = try await api.post("/api/rooms/\(room.id)/messages", ["text": ""], token: a.token)
        XCTAssertEqual(empty.status, 400)
    }
}
