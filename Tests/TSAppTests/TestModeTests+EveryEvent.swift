import Foundation
import TSJSON
import XCTest

/// Test mode logs every event the server emits, including those that reach no
/// one, with target and payload (docs/test-mode.md), and the doc's worked example holds as printed.
extension TestModeTests {
    struct EveryEventScenario {
        let room: String
        let aliceId: String
        let bobId: String
        let alice: String
        let bob: String
        let since: Int64
    }

    /// alice and bob in room "r", and one element of alice's ("kickoff") with no reactions.
    func everyEventFixtures() async throws -> EveryEventScenario {
        let data = try await loadFixtures([
            "users": [["username": "alice", "password": "alice-password"], ["username": "bob", "password": "bob-password"]],
            "rooms": [["ref": "r", "createdBy": "alice", "members": ["bob"]]],
            "elements": [["ref": "kickoff", "room": "r", "createdBy": "alice", "type": "note", "content": "hi"]],
        ])
        return EveryEventScenario(
            room: try XCTUnwrap(data["rooms"]?["r"]?.stringValue),
            aliceId: try XCTUnwrap(data["users"]?["alice"]?["id"]?.stringValue),
            bobId: try XCTUnwrap(data["users"]?["bob"]?["id"]?.stringValue),
            alice: try XCTUnwrap(data["users"]?["alice"]?["token"]?.stringValue),
            bob: try XCTUnwrap(data["users"]?["bob"]?["token"]?.stringValue),
            since: try XCTUnwrap(data["lastEventSequence"]?.intValue))
    }

    /// Every REST call that emits, as alice (no `X-Socket-Id`): each room event of
    /// docs/realtime.md once, in this order. Returns the new element's id.
    func causeEveryEvent(_ s: EveryEventScenario) async throws -> String {
        let base = "/api/rooms/\(s.room)"
        let created = try await api.post("\(base)/elements", ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4, "content": "new"], token: s.alice)
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(created.json["data"]?["id"]?.stringValue)
        let patched = try await api.patch("\(base)/elements/\(id)", ["content": "edited"], token: s.alice)
        XCTAssertEqual(patched.status, 200)
        let added = try await api.post("\(base)/elements/\(id)/reactions/toggle", token: s.alice)
        XCTAssertEqual(added.status, 200)
        let removed = try await api.post("\(base)/elements/\(id)/reactions/toggle", token: s.alice)
        XCTAssertEqual(removed.status, 200)
        let message = try await api.post("\(base)/messages", ["text": "hello"], token: s.alice)
        XCTAssertEqual(message.status, 201)
        let renamed = try await api.patch(base, ["name": "Renamed"], token: s.alice)
        XCTAssertEqual(renamed.status, 200)
        let deleted = try await api.delete("\(base)/elements/\(id)", token: s.alice)
        XCTAssertEqual(deleted.status, 200)
        let cleared = try await api.delete("\(base)/elements", token: s.alice)
        XCTAssertEqual(cleared.status, 200)
        return id
    }

    static let roomEvents = ["element:created", "element:updated", "element:reaction:added", "element:reaction:removed",
                             "message:created", "room:updated", "element:deleted", "room:cleared"]
    static let globalEvents = ["element:created:global", "element:deleted:global", "room:cleared:global"]

    func loggedEvents(since: Int64) async throws -> [JSONValue] {
        let r = try await api.get("/api/test/events?since=\(since)")
        XCTAssertEqual(r.status, 200)
        return r.json["data"]?["events"]?.arrayValue ?? []
    }

    func testEveryEventIsLoggedWhenNobodyListens() async throws {
        let s = try await everyEventFixtures()
        XCTAssertEqual(live.server.hub.connectedSockets.count, 0)
        let elementId = try await causeEveryEvent(s)
        let events = try await loggedEvents(since: s.since)

        // Each room event once, to the room, in the order caused, with 0 recipients.
        let roomRecords = events.filter { Self.roomEvents.contains($0["event"]?.stringValue ?? "") }
        XCTAssertEqual(roomRecords.map { $0["event"]?.stringValue ?? "" }, Self.roomEvents)
        for e in roomRecords {
            let name = e["event"]?.stringValue ?? "?"
            XCTAssertEqual(e["target"]?["type"], "room", name)
            XCTAssertEqual(e["target"]?["roomId"]?.stringValue, s.room, name)
            XCTAssertEqual(e["recipients"], 0, name)
            XCTAssertEqual(e["except"], .null, name)
        }
        func payload(_ name: String) -> JSONValue? { roomRecords.first { $0["event"]?.stringValue == name }?["payload"] }
        XCTAssertEqual(payload("element:created")?["element"]?["id"]?.stringValue, elementId)
        XCTAssertEqual(payload("element:updated")?["element"]?["content"], "edited")
        // Per-viewer payloads are logged as the actor sees them.
        XCTAssertEqual(payload("element:reaction:added")?["stats"]?["hasReacted"], true)
        XCTAssertEqual(payload("element:reaction:added")?["stats"]?["totalReactions"], 1)
        XCTAssertEqual(payload("element:reaction:added")?["reaction"]?["userId"]?.stringValue, s.aliceId)
        XCTAssertEqual(payload("element:reaction:removed")?["stats"]?["hasReacted"], false)
        XCTAssertEqual(payload("element:reaction:removed")?["userId"]?.stringValue, s.aliceId)
        XCTAssertEqual(payload("message:created")?["message"]?["text"], "hello")
        XCTAssertEqual(payload("room:updated")?["room"]?["name"], "Renamed")
        XCTAssertEqual(payload("element:deleted")?["elementId"]?.stringValue, elementId)
        XCTAssertEqual(payload("room:cleared")?["roomId"]?.stringValue, s.room)

        // Global events: one record per member's user channel, 0 recipients.
        for name in Self.globalEvents {
            let records = events.filter { $0["event"]?.stringValue == name }
            XCTAssertEqual(Set(records.compactMap { $0["target"]?["userId"]?.stringValue }), [s.aliceId, s.bobId], name)
            XCTAssertTrue(records.allSatisfy { $0["target"]?["type"] == "user" && $0["recipients"] == 0 }, name)
        }

        // The roomId filter finds them all.
        let byRoom = try await api.get("/api/test/events?since=\(s.since)&roomId=\(s.room)")
        XCTAssertEqual(byRoom.json["data"]?["events"]?.arrayValue?.count, events.count)
    }

    func testEveryEventIsLoggedWithItsRecipientsWhenSomeoneListens() async throws {
        let s = try await everyEventFixtures()
        let socket = try await PollingSocket.connect(base: live.base, token: s.bob)
        try await socket.emit("room:join", ["roomId": .string(s.room)], ackId: 1)
        _ = try await socket.receive(until: { $0.hasPrefix("431[") })
        let since = live.server.eventLog.lastSequence

        _ = try await causeEveryEvent(s)
        let events = try await loggedEvents(since: since)
        let roomRecords = events.filter { Self.roomEvents.contains($0["event"]?.stringValue ?? "") }
        XCTAssertEqual(roomRecords.map { $0["event"]?.stringValue ?? "" }, Self.roomEvents, "one record each: bob is the only viewer")
        for e in roomRecords {
            let name = e["event"]?.stringValue ?? "?"
            XCTAssertEqual(e["target"]?["roomId"]?.stringValue, s.room, name)
            XCTAssertEqual(e["recipients"], 1, "\(name) reached bob's socket")
        }
        func payload(_ name: String) -> JSONValue? { roomRecords.first { $0["event"]?.stringValue == name }?["payload"] }
        XCTAssertEqual(payload("element:reaction:added")?["stats"]?["hasReacted"], false, "bob's view: he has not reacted")
        for name in Self.globalEvents {
            let records = events.filter { $0["event"]?.stringValue == name }
            XCTAssertEqual(records.first { $0["target"]?["userId"]?.stringValue == s.bobId }?["recipients"], 1, name)
            XCTAssertEqual(records.first { $0["target"]?["userId"]?.stringValue == s.aliceId }?["recipients"], 0, name)
        }

        // What the log says was sent is what bob's socket got.
        var packets: [String] = []
        for _ in 0..<10 where !Self.roomEvents.allSatisfy({ name in packets.contains { $0.contains("[\"\(name)\"") } }) {
            packets += try await socket.receive()
        }
        for name in Self.roomEvents + Self.globalEvents {
            XCTAssertTrue(packets.contains { $0.contains("[\"\(name)\"") }, "bob's socket got \(name)")
        }
    }

    /// The worked example at the end of docs/test-mode.md, step by step.
    func testWorkedExampleOfTheDocHoldsAsPrinted() async throws {
        // setUp
        _ = try await api.post("/api/test/reset")
        let fx = try await api.post("/api/test/fixtures", try Self.exampleFixtures())
        XCTAssertEqual(fx.status, 201)
        let data = fx.json["data"] ?? .null
        let aliceToken = try XCTUnwrap(data["users"]?["alice"]?["token"]?.stringValue)
        let since = try XCTUnwrap(data["lastEventSequence"]?.intValue)
        let design = try XCTUnwrap(data["rooms"]?["design"]?.stringValue)
        let kickoff = try XCTUnwrap(data["elements"]?["kickoff"]?.stringValue)

        // the test: toggle a heart over REST (no socket anywhere)
        XCTAssertEqual(live.server.hub.connectedSockets.count, 0)
        let toggle = try await api.post("/api/rooms/\(design)/elements/\(kickoff)/reactions/toggle", token: aliceToken)
        XCTAssertEqual(toggle.status, 200)

        // assert what was broadcast, without a socket
        let events = try await api.get("/api/test/events?since=\(since)&event=element:reaction:added")
        XCTAssertEqual(events.json["data"]?["events"]?.arrayValue?.count, 1)
        XCTAssertEqual(events.json["data"]?["events"]?[0]?["payload"]?["stats"]?["totalReactions"], 3, "bob's, carol's and now alice's")
    }
}
