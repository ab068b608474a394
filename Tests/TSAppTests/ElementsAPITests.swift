import Foundation
import TSDomain
import TSJSON
import XCTest

/// Elements and reactions (docs/api.md: Element, Reaction, ElementStats and their routes).
final class ElementsAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    var a: TestUser!
    var b: TestUser!
    var roomId: String!

    override func setUp() async throws {
        try await super.setUp()
        a = try await api.register("alice", firstName: "Alice")
        b = try await api.register("bob")
        let r = try await api.post("/api/rooms", ["memberIds": [.string(b.id)]], token: a.token)
        roomId = try r.decode(DataEnvelope<RoomDTO>.self).data.id
    }


    func create(_ body: JSONValue, as user: TestUser? = nil) async throws -> APIClient.Response {
        try await api.post("/api/rooms/\(roomId!)/elements", body, token: (user ?? a).token)
    }

    func testCreateEveryTypeListOldestFirstAndShape() async throws {
        var ids: [String] = []
        for type in ElementType.allCases {
            let r = try await create(["type": .string(type.rawValue), "positionX": 1.5, "positionY": -2, "width": 100, "height": 50,
                                      "content": "c", "imageUrl": "https://x/i.png", "duration": 3.25])
            XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
            XCTAssertEqual(Set(r.json["data"]?.objectValue?.keys ?? []), ContractKeys.element)
            let e = try r.decode(DataEnvelope<ElementDTO>.self).data
            XCTAssertEqual(e.type, type.rawValue)
            XCTAssertEqual(e.positionX, 1.5)
            XCTAssertEqual(e.duration, 3.25)
            XCTAssertNil(e.reactions, "reactions is null while the element has none")
            XCTAssertTrue(r.json["data"]?["reactions"]?.isNull == true, "null, not omitted")
            ids.append(e.id)
        }
        let list = try await api.get("/api/rooms/\(roomId!)/elements", token: b.token).decode(DataEnvelope<[ElementDTO]>.self).data
        XCTAssertEqual(list.map(\.id), ids)
        let detail = try await api.get("/api/rooms/\(roomId!)", token: b.token).decode(DataEnvelope<RoomDetailDTO>.self).data
        XCTAssertEqual(detail.elements.map(\.id), ids)
        XCTAssertEqual(detail.elementCount, ids.count)
    }

    func testValidationNamesTheField() async throws {
        let base: JSONObject = ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4]
        func with(_ k: String, _ v: JSONValue?) -> JSONValue { var o = base; o[k] = v; return .object(o) }
        let cases: [(JSONValue, String)] = [
            (with("type", "sticker"), "type"), (with("type", nil), "type"), (with("positionX", "1"), "positionX"),
            (with("width", -1), "width"), (with("height", 1e300), "height"), (with("imageUrl", 5), "imageUrl"),
            (with("duration", "long"), "duration"), (with("positionY", nil), "positionY"),
        ]
        for (body, field) in cases {
            let r = try await create(body)
            XCTAssertEqual(r.status, 400, "\(body)")
            XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.field, field, "\(body)")
        }
        let arrayBody = try await create([1, 2])
        XCTAssertEqual(arrayBody.status, 400)
    }

    func testUpdateDeleteAndClear() async throws {
        let id = try await create(["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4]).decode(DataEnvelope<ElementDTO>.self).data.id
        let u = try await api.patch("/api/rooms/\(roomId!)/elements/\(id)", ["positionX": 99, "content": "moved", "imageUrl": nil], token: b.token)
        XCTAssertEqual(u.status, 200)
        let e = try u.decode(DataEnvelope<ElementDTO>.self).data
        XCTAssertEqual(e.positionX, 99)
        XCTAssertEqual(e.content, "moved")
        XCTAssertEqual(e.positionY, 2)
        let badType = try await api.patch("/api/rooms/\(roomId!)/elements/\(id)", ["type": "nope"], token: b.token)
        XCTAssertEqual(badType.status, 400)
        let missing = try await api.patch("/api/rooms/\(roomId!)/elements/unknown-id", ["positionX": 1], token: b.token)
        XCTAssertEqual(missing.status, 404)
        let del404 = try await api.delete("/api/rooms/\(roomId!)/elements/unknown-id", token: b.token)
        XCTAssertEqual(del404.status, 404)
        for _ in 0..<3 { _ = try await create(["type": "photo", "positionX": 1, "positionY": 2, "width": 3, "height": 4]) }
        let clear = try await api.delete("/api/rooms/\(roomId!)/elements", token: b.token)
        XCTAssertEqual(clear.status, 200)
        XCTAssertEqual(clear.json["data"]?["deleted"]?.intValue, 4)
        XCTAssertEqual(clear.json["data"]?["roomId"]?.stringValue, roomId)
        let rooms = try await api.get("/api/rooms/my-rooms", token: a.token).decode(DataEnvelope<[RoomDTO]>.self).data
        XCTAssertEqual(try XCTUnwrap(rooms.first).elementCount, 0)
    }

    func testToggleTwiceStatsForBothUsers() async throws {
        let id = try await create(["type": "photo", "positionX": 0, "positionY": 0, "width": 10, "height": 10]).decode(DataEnvelope<ElementDTO>.self).data.id
        let path = "/api/rooms/\(roomId!)/elements/\(id)/reactions/toggle"
        let added = try await api.post(path, token: b.token)
        XCTAssertEqual(added.status, 200)
        XCTAssertEqual(Set(added.json["data"]?["reaction"]?.objectValue?.keys ?? []), ContractKeys.reaction)
        XCTAssertEqual(Set(added.json["data"]?["elementStats"]?.objectValue?.keys ?? []), ContractKeys.stats)
        let t1 = try added.decode(DataEnvelope<ToggleDTO>.self).data
        XCTAssertEqual(t1.action, "added")
        XCTAssertEqual(t1.reaction.type, "heart")
        XCTAssertEqual(t1.reaction.user.username, "bob")
        XCTAssertEqual(t1.elementStats.totalReactions, 1)
        XCTAssertEqual(t1.elementStats.count, 1)
        XCTAssertTrue(t1.elementStats.hasReacted)
        XCTAssertEqual(t1.elementStats.userReaction, "heart")
        XCTAssertEqual(t1.elementStats.topReactors.map(\.id), [b.id])

        // Alice sees Bob's heart on the element, with her own hasReacted = false.
        let listA = try await api.get("/api/rooms/\(roomId!)/elements", token: a.token).decode(DataEnvelope<[ElementDTO]>.self).data
        let asA = try XCTUnwrap(listA.first)
        XCTAssertEqual(asA.reactions, ElementReactionsDTO(count: 1, hasReacted: false, userReaction: nil, topReactors: try XCTUnwrap(asA.reactions).topReactors))
        let listB = try await api.get("/api/rooms/\(roomId!)/elements", token: b.token).decode(DataEnvelope<[ElementDTO]>.self).data
        let asB = try XCTUnwrap(listB.first)
        XCTAssertEqual(asB.reactions?.hasReacted, true)
        XCTAssertEqual(asB.reactions?.userReaction, "heart")

        let aAdds = try await api.post(path, token: a.token).decode(DataEnvelope<ToggleDTO>.self).data
        XCTAssertEqual(aAdds.elementStats.totalReactions, 2)
        XCTAssertEqual(aAdds.elementStats.topReactors.map(\.id), [a.id, b.id], "most recent reactor first")

        let removed = try await api.post(path, token: b.token).decode(DataEnvelope<ToggleDTO>.self).data
        XCTAssertEqual(removed.action, "removed")
        XCTAssertEqual(removed.reaction.id, t1.reaction.id, "the removed reaction is returned")
        XCTAssertEqual(removed.elementStats.totalReactions, 1)
        XCTAssertFalse(removed.elementStats.hasReacted)
        XCTAssertNil(removed.elementStats.userReaction)

        let list = try await api.get("/api/rooms/\(roomId!)/elements/\(id)/reactions", token: b.token)
        let page = try list.decode(DataEnvelope<ReactionPageDTO>.self).data
        XCTAssertEqual(page.total, 1)
        XCTAssertFalse(page.hasReacted)
        XCTAssertEqual(page.reactions.map(\.userId), [a.id])

        let gone = try await api.post("/api/rooms/\(roomId!)/elements/nope/reactions/toggle", token: b.token)
        XCTAssertEqual(gone.status, 404)
    }

    func testTwentyConcurrentTogglesByOneUserEndConsistent() async throws {
        let id = try await create(["type": "photo", "positionX": 0, "positionY": 0, "width": 10, "height": 10]).decode(DataEnvelope<ElementDTO>.self).data.id
        let path = "/api/rooms/\(roomId!)/elements/\(id)/reactions/toggle"
        let api = self.api!
        let token = b.token
        let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<20 { group.addTask { let r = try await api.post(path, token: token); return (r.status, r.json["data"]?["action"]?.stringValue) } }
            var all: [(Int, String?)] = []
            for try await s in group { all.append(s) }
            return all
        }
        XCTAssertEqual(statuses.map(\.0), Array(repeating: 200, count: 20), "no 500 under concurrency")
        XCTAssertEqual(statuses.filter { $0.1 == "added" }.count, 10)
        XCTAssertEqual(statuses.filter { $0.1 == "removed" }.count, 10)
        let page = try await api.get("/api/rooms/\(roomId!)/elements/\(id)/reactions", token: token).decode(DataEnvelope<ReactionPageDTO>.self).data
        XCTAssertEqual(page.total, 0)
        XCTAssertEqual(page.reactions.count, 0)
        let rows = try live.server.db.readSync { c in try c.scalarInt("SELECT COUNT(*) FROM reactions WHERE element_id = ?", [.text(id)]) }
        XCTAssertEqual(rows, 0)
    }

    func testReactionListPaginatesNewestFirst() async throws {
        let id = try await create(["type": "photo", "positionX": 0, "positionY": 0, "width": 10, "height": 10]).decode(DataEnvelope<ElementDTO>.self).data.id
        var users = [a!, b!]
        for i in 0..<3 {
            let u = try await api.register("extra\(i)")
            _ = try await api.post("/api/rooms/\(roomId!)/members", ["userId": .string(u.id)], token: a.token)
            users.append(u)
        }
        for u in users { _ = try await api.post("/api/rooms/\(roomId!)/elements/\(id)/reactions/toggle", token: u.token) }
        let p1 = try await api.get("/api/rooms/\(roomId!)/elements/\(id)/reactions?limit=2", token: a.token).decode(DataEnvelope<ReactionPageDTO>.self).data
        XCTAssertEqual(p1.total, 5)
        XCTAssertTrue(p1.hasReacted)
        XCTAssertEqual(p1.reactions.map(\.userId), [users[4].id, users[3].id])
        let before = try XCTUnwrap(p1.reactions.last?.id)
        let p2 = try await api.get("/api/rooms/\(roomId!)/elements/\(id)/reactions?limit=2&before=\(before)", token: a.token)
            .decode(DataEnvelope<ReactionPageDTO>.self).data
        XCTAssertEqual(p2.reactions.map(\.userId), [users[2].id, users[1].id])
        let list = try await api.get("/api/rooms/\(roomId!)/elements", token: a.token).decode(DataEnvelope<[ElementDTO]>.self).data
        let el = try XCTUnwrap(list.first)
        XCTAssertEqual(el.reactions?.topReactors.map(\.id), [users[4].id, users[3].id, users[2].id])
    }

    /// The REST toggle reads the token's user inside its own write: a revoked
    /// token (logout) still gets 401 and writes nothing, also for an element that does not exist
    /// or a room the caller is not in (401 before 404/403); a bad signature gets 401 too.
    func testToggleWithARevokedTokenIs401AndWritesNothing() async throws {
        let id = try await create(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]).decode(DataEnvelope<ElementDTO>.self).data.id
        let path = "/api/rooms/\(roomId!)/elements/\(id)/reactions/toggle"
        let first = try await api.post(path, token: b.token)
        XCTAssertEqual(first.status, 200)
        let logout = try await api.post("/api/auth/logout", token: b.token)
        XCTAssertEqual(logout.status, 200)
        for p in [path, "/api/rooms/\(roomId!)/elements/nope/reactions/toggle", "/api/rooms/nope/elements/\(id)/reactions/toggle"] {
            let r = try await api.post(p, token: b.token)
            XCTAssertEqual(r.status, 401, p)
            XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.code, "UNAUTHORIZED", p)
        }
        let forged = try await api.post(path, token: a.token + "x")
        XCTAssertEqual(forged.status, 401)
        // Bob's heart is still there: the refused toggle did not remove it.
        let list = try await api.get("/api/rooms/\(roomId!)/elements", token: a.token).decode(DataEnvelope<[ElementDTO]>.self).data
        XCTAssertEqual(list.first?.reactions?.count, 1)
        // A fresh login works again, and the caller's row is in the answer.
        let login = try await api.post("/api/auth/login", ["username": "bob", "password": "password-123"])
        XCTAssertEqual(login.status, 200)
        let again = try await api.post(path, token: try login.decode(DataEnvelope<SessionDTO>.self).data.token)
        XCTAssertEqual(again.status, 200)
        let t = try again.decode(DataEnvelope<ToggleDTO>.self).data
        XCTAssertEqual(t.action, "removed")
        XCTAssertEqual(t.reaction.user.username, "bob")
    }
}
