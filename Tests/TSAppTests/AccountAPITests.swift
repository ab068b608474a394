import Foundation
import TSJSON
import TSStorage
import TSTestSupport
import XCTest

/// `DELETE /api/auth/me` and `GET /api/auth/me/export` over real HTTP and Socket.IO, on SQLite and
/// (with TOUCHSYNC_TEST_DATABASE=postgres) PostgreSQL.
extension APIClient.Response {
    /// `data.<key>` of the answer as a string; fails the test (with the body) when it is not there.
    func dataString(_ key: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try XCTUnwrap(json["data"]?[key]?.stringValue, "no data.\(key) in \(status): \(String(decoding: body.prefix(300), as: UTF8.self))",
                      file: file, line: line)
    }

    /// `data.<key>` of the answer as an integer.
    func dataInt(_ key: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int64 {
        try XCTUnwrap(json["data"]?[key]?.intValue, "no data.\(key) in \(status): \(String(decoding: body.prefix(300), as: UTF8.self))",
                      file: file, line: line)
    }
}

final class AccountAPITests: LiveServerTestCase, @unchecked Sendable {
    /// Two wrong passwords, then 429: the deletion's password check shares the login throttle.
    override var serverOverrides: [String: JSONValue] { ["auth.maxFailedLogins": 2] }

    func deleteAccount(_ token: String, password: JSONValue = "password-123") async throws -> APIClient.Response {
        try await api.send("DELETE", "/api/auth/me", json: .object(["password": password]), token: token)
    }

    func createElement(_ roomId: String, token: String) async throws -> APIClient.Response {
        try await api.post("/api/rooms/\(roomId)/elements", ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4,
                                                            "content": "hello"], token: token)
    }

    /// Rows that still name `userId`, by table, and rows whose parent is gone: all must be zero.
    func leftovers(of userId: String) async throws -> [String: Int64] {
        try await live.server.db.read { c in
            let checks: [(String, String)] = [
                ("users", "SELECT count(*) FROM users WHERE id = ?"),
                ("room_members", "SELECT count(*) FROM room_members WHERE user_id = ?"),
                ("rooms", "SELECT count(*) FROM rooms WHERE created_by = ? OR name_set_by = ?"),
                ("elements", "SELECT count(*) FROM elements WHERE created_by = ?"),
                ("reactions", "SELECT count(*) FROM reactions WHERE user_id = ?"),
                ("messages", "SELECT count(*) FROM messages WHERE user_id = ?"),
                ("posts", "SELECT count(*) FROM posts WHERE author_id = ?"),
                ("post_interactions", "SELECT count(*) FROM post_interactions WHERE user_id = ?"),
                ("devices", "SELECT count(*) FROM devices WHERE user_id = ?"),
                ("notifications", "SELECT count(*) FROM notifications WHERE user_id = ? OR actor_id = ?"),
                ("room_notifications", "SELECT count(*) FROM room_notifications WHERE actor_id = ?"),
                ("orphan reactions", "SELECT count(*) FROM reactions r WHERE ? <> '' AND NOT EXISTS(SELECT 1 FROM elements e WHERE e.id = r.element_id)"),
                ("orphan elements", "SELECT count(*) FROM elements e WHERE ? <> '' AND NOT EXISTS(SELECT 1 FROM rooms r WHERE r.id = e.room_id)"),
                ("orphan members", "SELECT count(*) FROM room_members m WHERE ? <> '' AND NOT EXISTS(SELECT 1 FROM users u WHERE u.id = m.user_id)"),
                ("wrong element_count", "SELECT count(*) FROM rooms r WHERE ? <> '' AND r.element_count <> (SELECT count(*) FROM elements e WHERE e.room_id = r.id)"),
                ("wrong reaction_count", "SELECT count(*) FROM elements e WHERE ? <> '' AND e.reaction_count <> (SELECT count(*) FROM reactions r WHERE r.element_id = e.id)"),
                ("wrong like_count", "SELECT count(*) FROM posts p WHERE ? <> '' AND p.like_count <> (SELECT count(*) FROM post_interactions l WHERE l.post_id = p.id AND l.liked_at IS NOT NULL)"),
                ("wrong save_count", "SELECT count(*) FROM posts p WHERE ? <> '' AND p.save_count <> (SELECT count(*) FROM post_interactions s WHERE s.post_id = p.id AND s.saved_at IS NOT NULL)"),
            ]
            var out: [String: Int64] = [:]
            for (name, sql) in checks {
                let n = sql.components(separatedBy: "?").count - 1
                out[name] = try c.scalarInt(sql, Array(repeating: .text(userId), count: n)) ?? -1
            }
            return out
        }
    }

    /// The Socket.IO events (name, payload) among polling packets.
    func events(_ packets: [String]) -> [(String, JSONValue)] {
        packets.compactMap { p in
            guard p.hasPrefix("42"), let v = try? JSONValue.parse(String(p.dropFirst(2))), let name = v[0]?.stringValue else { return nil }
            return (name, v[1] ?? .null)
        }
    }

    func testWrongPasswordIs401AndAMalformedBodyIs400NamingTheField() async throws {
        let alice = try await api.register("alice")
        let wrong = try await deleteAccount(alice.token, password: "not-her-password")
        XCTAssertEqual(wrong.status, 401, String(decoding: wrong.body, as: UTF8.self))
        XCTAssertEqual(wrong.json["error"]?["code"], "UNAUTHORIZED")
        XCTAssertNotNil(wrong.json["error"]?["message"]?.stringValue)
        for body: JSONValue in [[:], ["password": 5], ["password": ""]] {
            let bad = try await api.send("DELETE", "/api/auth/me", json: body, token: alice.token)
            XCTAssertEqual(bad.status, 400, "\(body): \(String(decoding: bad.body, as: UTF8.self))")
            XCTAssertEqual(bad.json["error"]?["field"]?.stringValue, "password", "\(body)")
        }
        let again = try await deleteAccount(alice.token, password: "still-not-hers")
        XCTAssertEqual(again.status, 401)
        let throttled = try await deleteAccount(alice.token)
        XCTAssertEqual(throttled.status, 429, "wrong passwords count against the login throttle, even before a right one")
        XCTAssertNotNil(throttled.header("Retry-After"))
        let login = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"])
        XCTAssertEqual(login.status, 429, "the same throttle as login")
        let noBody = try await api.send("DELETE", "/api/auth/me", token: alice.token)
        XCTAssertTrue([400, 415].contains(noBody.status), "no body: \(noBody.status)")
        let anonymous = try await api.send("DELETE", "/api/auth/me", json: ["password": "password-123"])
        XCTAssertEqual(anonymous.status, 401)
        let me = try await api.get("/api/auth/me", token: alice.token)
        XCTAssertEqual(me.status, 200, "nothing was deleted")
    }

    /// Alice shares a room with Bob (she created it) and has one of her own. After her deletion Bob's
    /// socket has seen her heart leave his element and her elements leave the room, his counts
    /// match the server, her tokens and sockets are dead, and no row of hers is left.
    func testDeletionRemovesPersonalDataKeepsSharedRoomsAndTellsTheOtherMembers() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let phone = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"]).dataString("token")
        let shared = try await api.post("/api/rooms", ["name": "shared", "memberIds": [.string(bob.id)]], token: alice.token).dataString("id")
        let own = try await api.post("/api/rooms", ["name": "mine"], token: alice.token).dataString("id")
        let a1 = try await createElement(shared, token: alice.token).dataString("id")
        let a2 = try await createElement(shared, token: alice.token).dataString("id")
        _ = try await createElement(own, token: alice.token)
        let b1 = try await createElement(shared, token: bob.token).dataString("id")
        let s1 = try await api.post("/api/rooms/\(shared)/elements/\(b1)/reactions/toggle", token: alice.token).status
        let s2 = try await api.post("/api/rooms/\(shared)/elements/\(a1)/reactions/toggle", token: bob.token).status
        let s3 = try await api.post("/api/rooms/\(shared)/messages", ["text": "bye"], token: alice.token).status
        let s4 = try await api.post("/api/devices", ["token": "alice-phone", "platform": "ios"], token: alice.token).status
        XCTAssertEqual([s1, s2, s3, s4], [200, 200, 201, 201])
        let post = try await api.post("/api/mobile/posts", ["content": "bob's post"], token: bob.token).dataString("id")
        let s5 = try await api.post("/api/mobile/posts/\(post)/like", token: alice.token).status
        let s6 = try await api.post("/api/mobile/posts/\(post)/save", token: alice.token).status
        XCTAssertEqual([s5, s6], [200, 200])
        _ = try await api.post("/api/mobile/posts", ["content": "alice's post"], token: alice.token)

        let before = try await api.get("/api/rooms/\(shared)/elements", token: bob.token).json["data"]?.arrayValue ?? []
        XCTAssertEqual(before.first { $0["id"]?.stringValue == b1 }?["reactions"]?["count"], 1, "Alice's heart is on Bob's element")
        let bobSocket = try await PollingSocket.connect(base: live.base, token: bob.token)
        try await bobSocket.emit("room:join", ["roomId": .string(shared)], ackId: 1)
        _ = try await bobSocket.receive(until: { $0.hasPrefix("431") })
        let aliceSocket = try await PollingSocket.connect(base: live.base, token: phone)

        let deleted = try await deleteAccount(alice.token)
        XCTAssertEqual(deleted.status, 200, String(decoding: deleted.body, as: UTF8.self))
        XCTAssertEqual(deleted.json["data"]?["userId"]?.stringValue, alice.id)
        XCTAssertEqual(deleted.json["data"]?["roomsDeleted"]?.intValue, 1)
        XCTAssertEqual(deleted.json["data"]?["elementsDeleted"]?.intValue, 3)

        // Bob's socket: the heart on his element, then both of Alice's elements, room and global.
        var packets: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            packets += try await bobSocket.receive()
            let names = events(packets).map(\.0)
            if names.filter({ $0 == "element:deleted" }).count == 2 && names.filter({ $0 == "element:deleted:global" }).count == 2
                && names.contains("element:reaction:removed") { break }
        }
        let seen = events(packets)
        let removed = try XCTUnwrap(seen.first { $0.0 == "element:reaction:removed" }?.1, "\(packets)")
        XCTAssertEqual(removed["elementId"]?.stringValue, b1)
        XCTAssertEqual(removed["userId"]?.stringValue, alice.id)
        XCTAssertEqual(removed["stats"]?["totalReactions"]?.intValue, 0)
        XCTAssertEqual(removed["stats"]?["hasReacted"], false)
        XCTAssertEqual(Set(seen.filter { $0.0 == "element:deleted" }.compactMap { $0.1["elementId"]?.stringValue }), [a1, a2])
        XCTAssertEqual(Set(seen.filter { $0.0 == "element:deleted:global" }.compactMap { $0.1["elementId"]?.stringValue }), [a1, a2])

        // Her other device's socket was kicked, and no token of hers works anywhere.
        let kicked = try await aliceSocket.receive(until: { $0 == "41" })
        XCTAssertTrue(kicked.contains("41"), "\(kicked)")
        for t in [alice.token, phone] {
            let me = try await api.get("/api/auth/me", token: t)
            XCTAssertEqual(me.status, 401)
            XCTAssertEqual(me.json["error"]?["code"], "UNAUTHORIZED")
            let rooms = try await api.get("/api/rooms/my-rooms", token: t).status
            let toggle = try await api.post("/api/rooms/\(shared)/elements/\(b1)/reactions/toggle", token: t).status
            let create = try await createElement(shared, token: t).status
            XCTAssertEqual([rooms, toggle, create], [401, 401, 401])
        }
        do {
            _ = try await PollingSocket.connect(base: live.base, token: phone)
            XCTFail("a deleted user's token must not connect")
        } catch let e as PollingSocket.Failure {
            XCTAssertTrue(e.description.contains("unauthorized"), e.description)
        }

        // The shared room stays, now Bob's, with the right counts; the post counts moved.
        let detail = try await api.get("/api/rooms/\(shared)", token: bob.token)
        XCTAssertEqual(detail.status, 200)
        XCTAssertEqual(detail.json["data"]?["createdBy"]?.stringValue, bob.id)
        XCTAssertEqual(detail.json["data"]?["elementCount"]?.intValue, 1)
        XCTAssertEqual(detail.json["data"]?["members"]?.arrayValue?.count, 1)
        let hearts = detail.json["data"]?["elements"]?[0]?["reactions"]
        XCTAssertTrue(hearts == .null || hearts?["count"] == 0, "Alice's heart left Bob's element: \(String(describing: hearts))")
        let state = try await api.post("/api/mobile/posts/interaction-state", ["postIds": [.string(post)]], token: bob.token)
        XCTAssertEqual(state.status, 200, String(decoding: state.body, as: UTF8.self))
        XCTAssertTrue(String(decoding: state.body, as: UTF8.self).contains("\"likeCount\":0"), String(decoding: state.body, as: UTF8.self))
        let gone = try await live.server.db.read { c in try c.scalarInt("SELECT count(*) FROM rooms WHERE id = ?", [.text(own)]) }
        XCTAssertEqual(gone, 0, "the room Alice alone belonged to is deleted")
        for (table, n) in try await leftovers(of: alice.id) { XCTAssertEqual(n, 0, table) }
    }

    /// Alice's other device keeps creating elements while she deletes her account: whichever
    /// commits first, nothing of hers remains, and Bob's element count from the events he got
    /// equals the server's.
    func testDeletionRacingWritesFromAnotherDeviceLeavesNoRows() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let phone = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"]).dataString("token")
        let room = try await api.post("/api/rooms", ["name": "shared", "memberIds": [.string(bob.id)]], token: alice.token).dataString("id")
        _ = try await createElement(room, token: bob.token)
        let bobSocket = try await PollingSocket.connect(base: live.base, token: bob.token)
        try await bobSocket.emit("room:join", ["roomId": .string(room)], ackId: 1)
        let joined = try await bobSocket.receive(until: { $0.hasPrefix("431") })
        let start = try await api.get("/api/rooms/\(room)", token: bob.token).dataInt("elementCount")

        let api = self.api!
        let writer = Task { () -> [Int] in
            var statuses: [Int] = []
            while statuses.last.map({ $0 == 201 }) ?? true, statuses.count < 500 {
                statuses.append(try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 1,
                                                                                  "height": 1], token: phone).status)
            }
            return statuses
        }
        // Let some of the racing writes land first.
        try await until {
            try await live.server.db.read { c in try c.scalarInt("SELECT count(*) FROM elements WHERE created_by = ?", [.text(alice.id)]) } ?? 0 >= 3
        }
        let deleted = try await deleteAccount(alice.token)
        XCTAssertEqual(deleted.status, 200, String(decoding: deleted.body, as: UTF8.self))
        let deletedCount = Int(try deleted.dataInt("elementsDeleted"))
        let statuses = try await writer.value
        XCTAssertTrue([401, 403, 404, 409].contains(statuses.last ?? 0), "the racing writes end refused (409: on PostgreSQL, one that was under way when the deletion committed): \(statuses.suffix(3))")

        for (table, n) in try await leftovers(of: alice.id) { XCTAssertEqual(n, 0, table) }
        let server = try await api.get("/api/rooms/\(room)", token: bob.token).dataInt("elementCount")
        XCTAssertEqual(server, 1, "only Bob's element is left")

        // Bob replays the element events in the order he got them, from the one element he saw
        // before: he must end where the server is (an element:created after its element:deleted
        // would leave him one too many).
        var created = Set<String>()
        var removed = Set<String>()
        var ordered: [(String, String)] = []
        var packets = joined
        let until = Date().addingTimeInterval(10)
        while Date() < until {
            for (name, payload) in events(packets) {
                if name == "element:created", let id = payload["element"]?["id"]?.stringValue { created.insert(id); ordered.append((name, id)) }
                if name == "element:deleted", let id = payload["elementId"]?.stringValue { removed.insert(id); ordered.append((name, id)) }
            }
            if removed.count >= deletedCount && created.count >= deletedCount { break }
            packets = try await bobSocket.receive()
        }
        XCTAssertGreaterThanOrEqual(deletedCount, 3, "the racing writes landed before the deletion")
        XCTAssertEqual(removed.count, deletedCount, "one element:deleted per element of hers")
        XCTAssertEqual(created, removed, "every element Bob saw created he saw deleted")
        var bobSees = start
        for (name, _) in ordered { bobSees += name == "element:created" ? 1 : -1 }
        XCTAssertEqual(bobSees, server, "Bob's count from events")
        var present = Set<String>()
        for (name, id) in ordered { if name == "element:created" { present.insert(id) } else { present.remove(id) } }
        XCTAssertEqual(present, [], "no element of hers is left in Bob's view: \(ordered)")
    }

    func testExportHoldsEverythingStoredAboutTheCallerButThePasswordHash() async throws {
        let alice = try await api.register("alice", firstName: "Alice")
        let bob = try await api.register("bob")
        let room = try await api.post("/api/rooms", ["name": "shared", "memberIds": [.string(bob.id)]], token: alice.token).dataString("id")
        let element = try await createElement(room, token: alice.token).dataString("id")
        let b1 = try await createElement(room, token: bob.token).dataString("id")
        _ = try await api.post("/api/rooms/\(room)/elements/\(b1)/reactions/toggle", token: alice.token)
        _ = try await api.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", token: bob.token)
        _ = try await api.post("/api/rooms/\(room)/messages", ["text": "hi"], token: alice.token)
        _ = try await api.post("/api/devices", ["token": "alice-phone", "platform": "ios"], token: alice.token)
        let post = try await api.post("/api/mobile/posts", ["content": "hello"], token: bob.token).dataString("id")
        _ = try await api.post("/api/mobile/posts/\(post)/like", token: alice.token)
        _ = try await api.post("/api/mobile/posts/\(post)/save", token: alice.token)
        _ = try await api.post("/api/mobile/posts", ["content": "mine"], token: alice.token)
        // Bob's heart on Alice's element is a notification of hers (delivered or not, it is stored).
        try await until {
            try await live.server.db.read({ c in try c.scalarInt("SELECT count(*) FROM notifications WHERE user_id = ?", [.text(alice.id)]) }) ?? 0 >= 1
        }

        let r = try await api.get("/api/auth/me/export", token: alice.token)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let d = try XCTUnwrap(r.json["data"])
        XCTAssertFalse(String(decoding: r.body, as: UTF8.self).contains("pbkdf2"), "no password hash")
        XCTAssertNil(d["user"]?["passwordHash"])
        XCTAssertEqual(d["user"]?["id"]?.stringValue, alice.id)
        XCTAssertEqual(d["user"]?["firstName"]?.stringValue, "Alice")
        XCTAssertEqual(d["rooms"]?[0]?["id"]?.stringValue, room)
        XCTAssertEqual(d["memberships"]?[0]?["roomId"]?.stringValue, room)
        XCTAssertEqual(d["elements"]?.arrayValue?.map { $0["id"]?.stringValue }, [element])
        XCTAssertEqual(d["reactions"]?.arrayValue?.map { $0["elementId"]?.stringValue }, [b1])
        XCTAssertEqual(d["messages"]?[0]?["text"]?.stringValue, "hi")
        XCTAssertEqual(d["posts"]?[0]?["content"]?.stringValue, "mine")
        XCTAssertEqual(d["likes"]?[0]?["postId"]?.stringValue, post)
        XCTAssertEqual(d["saves"]?[0]?["postId"]?.stringValue, post)
        XCTAssertEqual(d["devices"]?[0]?["token"]?.stringValue, "alice-phone")
        XCTAssertEqual(d["notifications"]?[0]?["actorId"]?.stringValue, bob.id)
        XCTAssertEqual(d["truncated"]?.arrayValue?.count, 0)
        let s = try await api.get("/api/auth/me/export").status
        XCTAssertEqual(s, 401)
    }

    func testAccountRoutesAreDocumented() async throws {
        let doc = try await api.get("/openapi.json").json
        XCTAssertEqual(doc["paths"]?["/api/auth/me"]?["delete"]?["requestBody"]?["content"]?["application/json"]?["schema"]?["$ref"],
                       "#/components/schemas/DeleteAccountRequest")
        XCTAssertNotNil(doc["paths"]?["/api/auth/me"]?["delete"]?["responses"]?["401"])
        XCTAssertNotNil(doc["paths"]?["/api/auth/me/export"]?["get"]?["responses"]?["200"])
    }
}
