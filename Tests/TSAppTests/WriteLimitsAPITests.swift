import Foundation
import TSJSON
import XCTest

/// Per-user write limits over real sockets (REST): past a user's burst the write is refused with
/// 429 RATE_LIMITED and Retry-After, and nothing is written; another user is not affected. The
/// Socket.IO ack error, through python-socketio: conformance/test_write_limits.py.
final class WriteLimitsAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] {
        ["limits.elementWritesPerSecond": 1, "limits.elementWritesBurst": 5,
         "limits.reactionTogglesPerSecond": 1, "limits.reactionTogglesBurst": 3,
         "limits.roomCreatesPerSecond": 1, "limits.roomCreatesBurst": 2]
    }

    let note: JSONValue = ["type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10]

    func testElementWritesPastTheBurstGet429WithRetryAfterAndOthersAreServed() async throws {
        let alice = try await api.register("alice\(UInt32.random(in: 0...UInt32.max))")
        let bob = try await api.register("bob\(UInt32.random(in: 0...UInt32.max))")
        let room = try await api.post("/api/rooms", ["memberIds": [.string(bob.id)]], token: alice.token).json["data"]?["id"]?.stringValue ?? ""
        let (ok, refused) = try await untilRefused { try await api.post("/api/rooms/\(room)/elements", note, token: alice.token) }
        // 5 in a burst, plus at most the few that refilled (1/s) while they were sent.
        XCTAssertGreaterThanOrEqual(ok, 5)
        XCTAssertLessThan(ok, 30, "the limit never refused")
        let r = try XCTUnwrap(refused)
        XCTAssertEqual(r.json["error"]?["code"]?.stringValue, "RATE_LIMITED", String(decoding: r.body, as: UTF8.self))
        XCTAssertTrue(r.json["error"]?["message"]?.stringValue?.contains("element writes") ?? false, String(decoding: r.body, as: UTF8.self))
        let retry = try XCTUnwrap(Int(r.header("Retry-After") ?? ""), "Retry-After missing")
        XCTAssertTrue((1...2).contains(retry), "Retry-After \(retry)")
        // The refused write did nothing.
        let elements = try await api.get("/api/rooms/\(room)/elements", token: bob.token)
        XCTAssertEqual(elements.json["data"]?.arrayValue?.count, ok)
        // Updates and deletes share the budget: still refused for alice...
        let first = try XCTUnwrap(elements.json["data"]?[0]?["id"]?.stringValue)
        let aliceDelete = try await api.delete("/api/rooms/\(room)/elements/\(first)", token: alice.token)
        XCTAssertEqual(aliceDelete.status, 429)
        // ...while bob, in the same room at the same moment, writes with his own full budget (burst 5).
        for _ in 0..<4 {
            let created = try await api.post("/api/rooms/\(room)/elements", note, token: bob.token)
            XCTAssertEqual(created.status, 201)
        }
        let bobUpdate = try await api.patch("/api/rooms/\(room)/elements/\(first)", ["content": "bob"], token: bob.token)
        XCTAssertEqual(bobUpdate.status, 200, String(decoding: bobUpdate.body, as: UTF8.self))
        // Reading is never limited.
        let aliceRead = try await api.get("/api/rooms/\(room)/elements", token: alice.token)
        XCTAssertEqual(aliceRead.status, 200)
    }

    func testReactionTogglesAndRoomCreatesHaveTheirOwnBudgets() async throws {
        let carol = try await api.register("carol\(UInt32.random(in: 0...UInt32.max))")
        let room = try await api.post("/api/rooms", nil, token: carol.token).json["data"]?["id"]?.stringValue ?? ""
        let element = try await api.post("/api/rooms/\(room)/elements", note, token: carol.token).json["data"]?["id"]?.stringValue ?? ""
        let (toggles, refusedToggle) = try await untilRefused {
            try await api.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", token: carol.token)
        }
        XCTAssertGreaterThanOrEqual(toggles, 3)
        XCTAssertEqual(refusedToggle?.json["error"]?["code"]?.stringValue, "RATE_LIMITED")
        XCTAssertNotNil(refusedToggle?.header("Retry-After"))
        // Element writes were not spent by the toggles.
        let afterToggles = try await api.post("/api/rooms/\(room)/elements", note, token: carol.token)
        XCTAssertEqual(afterToggles.status, 201)
        let (rooms, refusedRoom) = try await untilRefused { try await api.post("/api/rooms", nil, token: carol.token) }
        XCTAssertGreaterThanOrEqual(rooms, 1, "one room was created above; the burst is 2")
        XCTAssertEqual(refusedRoom?.status, 429)
    }
}
