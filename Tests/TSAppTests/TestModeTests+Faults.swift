import Foundation
import TSApp
import TSJSON
import XCTest

/// `POST /api/test/faults` / `GET /api/test/faults` (docs/test-mode.md, Faults): what a request
/// must look like (400 naming the field), a target without a socket (404), and the fault on a
/// live socket listed, cleared, and gone after a reset. What each fault does to a client is
/// observed by python-socketio in conformance/test_faults.py.
extension TestModeTests {
    func testFaultRequestsThatAreMalformedAre400NamingTheField() async throws {
        let user: JSONValue = "4f0c0000-0000-4000-8000-000000000000"
        let cases: [(JSONValue, String)] = [
            ([1, 2], "body"),
            (["userId": user], "action"),
            (["userId": user, "action": "nap"], "action"),
            (["userId": user, "action": "disconnect"], "reason"),
            (["userId": user, "action": "disconnect", "reason": "bored"], "reason"),
            (["userId": user, "action": "delay"], "milliseconds"),
            (["userId": user, "action": "delay", "milliseconds": -1], "milliseconds"),
            (["userId": user, "action": "delay", "milliseconds": 60_001], "milliseconds"),
            (["userId": user, "action": "delay", "milliseconds": "fast"], "milliseconds"),
            (["userId": user, "action": "drop"], "events"),
            (["userId": user, "action": "drop", "events": []], "events"),
            (["userId": user, "action": "drop", "events": ["element:created"], "count": 0], "count"),
            (["action": "hold"], "userId"),
            (["userId": "", "action": "hold"], "userId"),
            (["userId": user, "sid": "abc", "action": "hold"], "sid"),
        ]
        for (body, field) in cases {
            let r = try await api.post("/api/test/faults", body)
            XCTAssertEqual(r.status, 400, "\(body.serializedString()): \(String(decoding: r.body, as: UTF8.self))")
            XCTAssertEqual(r.json["error"]?["code"], "VALIDATION_ERROR", body.serializedString())
            let got = r.json["error"]?["field"]?.stringValue ?? ""
            XCTAssertTrue(got == field || got.hasPrefix(field + "["), "\(body.serializedString()): field \(got), expected \(field)")
            XCTAssertNotNil(r.json["error"]?["message"]?.stringValue)
        }
        let notJSON = try await api.send("POST", "/api/test/faults", rawBody: Data("action=hold".utf8),
                                         headers: ["Content-Type": "application/x-www-form-urlencoded"])
        XCTAssertEqual(notJSON.status, 415)
    }

    func testFaultOnATargetWithoutASocketIs404() async throws {
        let noSocket = try await api.post("/api/test/faults", ["userId": "4f0c0000-0000-4000-8000-000000000000", "action": "hold"])
        XCTAssertEqual(noSocket.status, 404, String(decoding: noSocket.body, as: UTF8.self))
        XCTAssertEqual(noSocket.json["error"]?["code"], "NOT_FOUND")
        let noSession = try await api.post("/api/test/faults", ["sid": "no-such-session", "action": "disconnect", "reason": "transport close"])
        XCTAssertEqual(noSession.status, 404)
        // The body is checked first: a malformed request is a 400 even for a target without sockets.
        let both = try await api.post("/api/test/faults", ["sid": "no-such-session", "action": "delay"])
        XCTAssertEqual(both.status, 400)
        // clear without a target acts on every faulted session: none is not an error.
        let clear = try await api.post("/api/test/faults", ["action": "clear"])
        XCTAssertEqual(clear.status, 200)
        XCTAssertEqual(clear.json["data"]?["sessions"], [])
    }

    func testAFaultOnALiveSocketIsListedClearedAndGoneAfterAReset() async throws {
        let fx = try await loadFixtures(try Self.exampleFixtures())
        let bob = try XCTUnwrap(fx["users"]?["bob"])
        let socket = try await PollingSocket.connect(base: live.base, token: try XCTUnwrap(bob["token"]?.stringValue))

        let held = try await api.post("/api/test/faults", ["userId": bob["id"] ?? .null, "action": "hold"])
        XCTAssertEqual(held.status, 200, String(decoding: held.body, as: UTF8.self))
        XCTAssertEqual(held.json["data"]?["sessions"], [.string(socket.engineSid)])
        let delayed = try await api.post("/api/test/faults", ["sid": .string(socket.engineSid), "action": "delay", "milliseconds": 250])
        XCTAssertEqual(delayed.json["data"]?["sessions"], [.string(socket.engineSid)])

        var list = try await api.get("/api/test/faults")
        XCTAssertEqual(list.status, 200)
        let fault = try XCTUnwrap(list.json["data"]?["faults"]?.arrayValue?.first)
        XCTAssertEqual(fault["sid"], .string(socket.engineSid))
        XCTAssertEqual(fault["userId"], bob["id"])
        XCTAssertEqual(fault["holding"], true)
        XCTAssertEqual(fault["delayMilliseconds"], 250)

        let cleared = try await api.post("/api/test/faults", ["action": "clear"])
        XCTAssertEqual(cleared.json["data"]?["sessions"], [.string(socket.engineSid)])
        list = try await api.get("/api/test/faults")
        XCTAssertEqual(list.json["data"]?["faults"], [])

        _ = try await api.post("/api/test/faults", ["userId": bob["id"] ?? .null, "action": "hold"])
        _ = try await api.post("/api/test/reset")
        list = try await api.get("/api/test/faults")
        XCTAssertEqual(list.json["data"]?["faults"], [], "a reset disconnects every socket, and their faults with them")
    }

    func testTheInspectorsDisconnectButtonSendsASocketIODisconnect() async throws {
        let fx = try await loadFixtures(try Self.exampleFixtures())
        let bob = try XCTUnwrap(fx["users"]?["bob"]?["token"]?.stringValue)
        let socket = try await PollingSocket.connect(base: live.base, token: bob)
        let socketId = try XCTUnwrap(live.server.hub.sockets(onEngineSession: socket.engineSid).first?.id)
        // Held packets do not hold the DISCONNECT back: a kick discards them.
        _ = try await api.post("/api/test/faults", ["sid": .string(socket.engineSid), "action": "hold"])

        let r = try await api.send("POST", "/inspector/api/sockets/\(socketId)/disconnect", headers: ["X-Inspector-Action": "1"])
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(r.json["sid"], .string(socket.engineSid))
        let packets = try await socket.receive(until: { $0 == "41" })
        XCTAssertTrue(packets.contains("41"), "the client got a Socket.IO DISCONNECT: \(packets)")
        let list = try await api.get("/api/test/faults")
        XCTAssertEqual(list.json["data"]?["faults"], [], "the kick removed the hold")
    }

    func testFaultRoutesAre404WhenTestModeIsOff() async throws {
        let plain = try LiveServer()
        let client = APIClient(base: plain.base)
        let post = try await client.post("/api/test/faults", ["action": "clear"])
        XCTAssertEqual(post.status, 404)
        let get = try await client.get("/api/test/faults")
        XCTAssertEqual(get.status, 404)
        await plain.stop()
    }
}
