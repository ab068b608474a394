import Foundation
import TSDomain
import TSJSON
import XCTest

/// The hot read paths: `GET /api/rooms/my-rooms` and `POST /api/mobile/posts/interaction-state`
/// answer bytes written straight from the rows (`JSONBytesWriter`, no `JSONValue` tree), with the
/// token's user checked inside the same read. Over a real socket, these check that the bytes
/// decode with the Codable contract models to the stored values, and equal byte for byte the
/// encoding the routes had before (the tree literals of `legacyRoom` / `legacyStates`, copied
/// from the code the writers replaced) for the same rows: odd strings, nulls and unicode included.
final class ReadPathBytesTests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    static let oddNames = [
        "plain", "quote \" and \\ backslash / slash", "controls \u{01}\u{1F}\t\n\r\u{08}\u{0C}\u{7F}",
        "unicode Ümlaut 日本語 🎉 👩‍👩‍👧 e\u{301}", "</script><b>&amp;", "null", "\u{2028}\u{2029} separators",
    ]

    /// The tree `Room.jsonObject` built before the byte writers (verbatim), the reference for the bytes.
    static func legacyRoom(_ r: Room) -> JSONValue {
        func user(_ u: PublicUser) -> JSONValue {
            .object(["id": .string(u.id), "username": .string(u.username), "firstName": .optional(u.firstName), "avatarUrl": .optional(u.avatarUrl)])
        }
        return .object([
            "id": .string(r.id), "name": .string(r.name), "createdBy": .string(r.createdBy),
            "createdAt": .string(Timestamp.iso8601(r.createdAt)), "updatedAt": .string(Timestamp.iso8601(r.updatedAt)),
            "isActive": .bool(r.isActive), "nameSetBy": .optional(r.nameSetBy), "nameSetByUser": r.nameSetByUser.map(user) ?? .null,
            "elementCount": .int(r.elementCount),
            "badges": ["messages": .int(r.unreadMessages), "elements": .int(r.unseenElements)],
            "hasUnread": .bool(r.hasUnread),
        ])
    }

    /// The interaction-state body built before the byte writers (verbatim).
    static func legacyStates(_ s: [TSDomain.PostInteractionState]) -> JSONValue {
        let interactions: [JSONValue] = s.map {
            .object(["postId": .string($0.postId), "isLiked": .bool($0.isLiked), "isSaved": .bool($0.isSaved),
                     "likeCount": .int($0.likeCount), "saveCount": .int($0.saveCount)])
        }
        let data: JSONValue = .object([
            "interactions": .array(interactions), "totalPosts": .int(Int64(s.count)),
            "totalLiked": .int(Int64(s.filter(\.isLiked).count)), "totalSaved": .int(Int64(s.filter(\.isSaved).count)),
        ])
        return .object(["success": true, "message": "Interaction states retrieved successfully", "data": data])
    }

    func expect(_ status: Int, _ r: APIClient.Response, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, String(decoding: r.body, as: UTF8.self), file: file, line: line)
    }

    func testMyRoomsBytesEqualTheTreeEncodingAndDecodeToTheStoredValues() async throws {
        let odd = "Zoë \"Z\" \\ \u{01} 🦊"
        let a = try await api.register("alice", firstName: odd)
        let b = try await api.register("bob")
        var ids: [String: String] = [:]  // name → room id
        for name in Self.oddNames {
            let r = try await api.post("/api/rooms", ["name": .string(name), "memberIds": [.string(b.id)]], token: a.token)
            XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
            ids[name] = try r.decode(DataEnvelope<RoomDTO>.self).data.id
        }
        // A room with the default name (nameSetBy null), renamed by nobody; one renamed by Bob
        // (no first name: a null inside nameSetByUser); badges from Bob's element and message.
        let unnamed = try await api.post("/api/rooms", ["memberIds": [.string(a.id)]], token: b.token)
        XCTAssertEqual(unnamed.status, 201)
        let plain = try XCTUnwrap(ids["plain"])
        expect(200, try await api.patch("/api/rooms/\(plain)", ["name": "renamed \"by\" bob"], token: b.token))
        let element: JSONValue = ["type": "note", "positionX": 10, "positionY": 20.5, "width": 100, "height": 80]
        expect(201, try await api.post("/api/rooms/\(plain)/elements", element, token: b.token))
        expect(201, try await api.post("/api/rooms/\(plain)/messages", ["text": "hi"], token: b.token))

        let domain = live.server.domain
        let before = try await domain.rooms.myRooms(viewer: a.id)
        let r = try await api.get("/api/rooms/my-rooms", token: a.token)
        let after = try await domain.rooms.myRooms(viewer: a.id)
        XCTAssertEqual(before, after, "nothing changed while the bytes were read")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/json; charset=utf-8")
        let legacy = JSONValue.object(["data": .array(after.map(Self.legacyRoom))]).serialized()
        XCTAssertEqual([UInt8](r.body), legacy, "bytes differ from the tree encoding:\n\(String(decoding: r.body, as: UTF8.self))")
        XCTAssertEqual(JSONValue.object(["data": .array(after.map(\.json))]).serialized(), legacy, "Room.json is the same shape")

        // The Codable contract models (iOS decoding) get the stored values back.
        let rooms = try r.decode(DataEnvelope<[RoomDTO]>.self).data
        XCTAssertEqual(rooms.count, Self.oddNames.count + 1)
        for key in r.json["data"]?.arrayValue ?? [] { XCTAssertEqual(Set(key.objectValue?.keys ?? []), ContractKeys.room) }
        for name in Self.oddNames where name != "plain" {
            let room = try XCTUnwrap(rooms.first { $0.id == ids[name] }, name)
            XCTAssertEqual(room.name, name)
            XCTAssertEqual(room.nameSetBy, a.id)
            XCTAssertEqual(room.nameSetByUser, UserDTO(id: a.id, username: "alice", firstName: odd, avatarUrl: nil))
        }
        let renamed = try XCTUnwrap(rooms.first { $0.id == plain })
        XCTAssertEqual(renamed.name, "renamed \"by\" bob")
        XCTAssertEqual(renamed.nameSetByUser, UserDTO(id: b.id, username: "bob", firstName: nil, avatarUrl: nil))
        XCTAssertEqual(renamed.elementCount, 1)
        XCTAssertEqual(renamed.badges, BadgesDTO(messages: 1, elements: 1))
        XCTAssertTrue(renamed.hasUnread)
        XCTAssertEqual(rooms.first?.id, plain, "most recently active first")
        let defaultNamed = try XCTUnwrap(rooms.first { $0.createdBy == b.id && $0.id != plain })
        XCTAssertNil(defaultNamed.nameSetBy)
        XCTAssertNil(defaultNamed.nameSetByUser)
        XCTAssertFalse(defaultNamed.hasUnread)

        // A user in no room: an empty array.
        let c = try await api.register("carol")
        let none = try await api.get("/api/rooms/my-rooms", token: c.token)
        XCTAssertEqual(String(decoding: none.body, as: UTF8.self), #"{"data":[]}"#)
    }

    func testInteractionStateBytesEqualTheTreeEncodingAndDecodeToTheStoredValues() async throws {
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        var posts: [String] = []
        for content in Self.oddNames.prefix(4) {
            let r = try await api.post("/api/mobile/posts", ["content": .string(content)], token: a.token)
            XCTAssertEqual(r.status, 201)
            posts.append(try XCTUnwrap(r.decode(MobileEnvelope<PostDTO>.self).data).id)
        }
        expect(200, try await api.post("/api/mobile/posts/\(posts[0])/like", token: b.token))
        expect(200, try await api.post("/api/mobile/posts/\(posts[0])/like", token: a.token))
        expect(200, try await api.post("/api/mobile/posts/\(posts[1])/save", token: b.token))
        expect(200, try await api.post("/api/mobile/posts/\(posts[2])/like", token: b.token))
        expect(200, try await api.post("/api/mobile/posts/\(posts[2])/save", token: b.token))

        // Unknown (odd) ids left out, duplicates answered once, request order kept.
        let asked = [posts[2], "unknown \"odd\" 日本 \u{01}", posts[0], posts[2], posts[1], posts[3], posts[0]]
        let r = try await api.post("/api/mobile/posts/interaction-state", ["postIds": .array(asked.map(JSONValue.string))], token: b.token)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/json; charset=utf-8")
        let states = try await live.server.domain.posts.interactionStates(postIds: asked, viewer: b.id).interactions
        XCTAssertEqual(states.map(\.postId), [posts[2], posts[0], posts[1], posts[3]])
        XCTAssertEqual([UInt8](r.body), Self.legacyStates(states).serialized(),
                       "bytes differ from the tree encoding:\n\(String(decoding: r.body, as: UTF8.self))")

        let decoded = try r.decode(InteractionStateResponse.self)
        XCTAssertTrue(decoded.success)
        XCTAssertNil(decoded.error)
        let data = try XCTUnwrap(decoded.data)
        XCTAssertEqual(data.interactions.map(\.postId), [posts[2], posts[0], posts[1], posts[3]])
        XCTAssertEqual(data.interactions.map(\.isLiked), [true, true, false, false])
        XCTAssertEqual(data.interactions.map(\.isSaved), [true, false, true, false])
        XCTAssertEqual(data.interactions.map(\.likeCount), [1, 2, 0, 0])
        XCTAssertEqual(data.interactions.map(\.saveCount), [1, 0, 1, 0])
        XCTAssertEqual([data.totalPosts, data.totalLiked, data.totalSaved], [4, 2, 2])

        // Only unknown ids: an empty list and zero totals.
        let none = try await api.post("/api/mobile/posts/interaction-state", ["postIds": ["nope"]], token: b.token)
        XCTAssertEqual([UInt8](none.body), Self.legacyStates([]).serialized())
    }

    /// The body's fast reader (`FastArrayBody`: plain `{"postIds":[…]}` without a tree) and the
    /// full parse + schema check answer the same bytes for the same ids; bodies the fast reader
    /// leaves (escapes, other Content-Type spellings, extra members, out-of-range counts) get the
    /// full way's answer and errors, in the mobile envelope.
    func testInteractionStateBodyFastAndFullWaysAnswerTheSame() async throws {
        let a = try await api.register("alice")
        let r = try await api.post("/api/mobile/posts", ["content": "p"], token: a.token)
        let post = try XCTUnwrap(r.decode(MobileEnvelope<PostDTO>.self).data).id
        expect(200, try await api.post("/api/mobile/posts/\(post)/like", token: a.token))
        func ask(_ body: String, _ contentType: String? = "application/json") async throws -> APIClient.Response {
            try await api.send("POST", "/api/mobile/posts/interaction-state", rawBody: Data(body.utf8),
                               headers: contentType.map { ["Content-Type": $0] } ?? [:], token: a.token)
        }
        let reference = try await ask("{\"postIds\":[\"\(post)\",\"other\"]}")  // the fast way
        expect(200, reference)
        let escapedId = post.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        for (body, type) in [
            (" { \"postIds\" : [ \"\(post)\" , \"other\" ] } ", "application/json"),        // fast, spaced
            ("{\"postIds\":[\"\(escapedId)\",\"other\"]}", "application/json"),              // escapes: full way
            ("{\"postIds\":[\"\(post)\",\"other\"]}", "Application/JSON; charset=UTF-8"),   // full way's media type check
            ("{\"postIds\":[\"\(post)\",\"other\"]}", "application/json; charset=utf-8"),   // fast, with charset
        ] as [(String, String?)] {
            let answer = try await ask(body, type)
            XCTAssertEqual(answer.status, 200, body)
            XCTAssertEqual(answer.body, reference.body, body)
        }
        // Errors come from the full way, as before: 400 in the mobile envelope naming the field.
        for body in [#"{"postIds":[]}"#, #"{"postIds":["a"],"x":1}"#, #"{"postIds":[1]}"#, #"{"postIds":"a"}"#, #"{"postIds":["a",]}"#,
                     "{\"postIds\":[" + (0..<51).map { "\"id\($0)\"" }.joined(separator: ",") + "]}"] {
            let answer = try await ask(body)
            XCTAssertEqual(answer.status, 400, body)
            let e = try answer.decode(InteractionStateResponse.self)
            XCTAssertFalse(e.success, body)
            XCTAssertEqual(e.code, "VALIDATION_ERROR", body)
            XCTAssertNotNil(e.error, body)
        }
        expect(415, try await ask(#"{"postIds":["a"]}"#, "text/plain"))
    }

    /// The token's user is checked inside the route's own read: a revoked token (logout) gets
    /// 401 in the route family's envelope, also when its body is bad (401 before 400).
    func testRevokedAndBadTokensGet401InTheRoutesEnvelope() async throws {
        let a = try await api.register("alice")
        expect(200, try await api.get("/api/rooms/my-rooms", token: a.token))
        expect(400, try await api.post("/api/mobile/posts/interaction-state", ["postIds": []], token: a.token))
        expect(200, try await api.post("/api/auth/logout", token: a.token))

        let rooms = try await api.get("/api/rooms/my-rooms", token: a.token)
        XCTAssertEqual(rooms.status, 401)
        XCTAssertEqual(try rooms.decode(ErrorEnvelope.self).error.code, "UNAUTHORIZED")
        for body: JSONValue in [["postIds": ["x"]], ["postIds": []], ["postIds": .array((0...50).map { .string("\($0)") })]] {
            let r = try await api.post("/api/mobile/posts/interaction-state", body, token: a.token)
            XCTAssertEqual(r.status, 401, "\(body)")
            let e = try r.decode(InteractionStateResponse.self)
            XCTAssertEqual(e.code, "UNAUTHORIZED")
            XCTAssertFalse(e.success)
        }
        for token in ["garbage", a.token + "x"] {
            expect(401, try await api.get("/api/rooms/my-rooms", token: token))
            expect(401, try await api.post("/api/mobile/posts/interaction-state", ["postIds": ["x"]], token: token))
        }
    }
}
