import Foundation
import TSJSON
@testable import TSRoutes
import XCTest

/// What the server really sends over Socket.IO conforms to `/asyncapi.json`: every ack of every
/// client event (a socket does each once), and every server event (the event log records each
/// payload as emitted), against the schema of its declaration. A field renamed at an emit site or
/// in a declaration fails here (additional properties are not allowed, every field is required).
extension TestModeTests {
    func testEverySocketAckAndEveryEmittedPayloadConformsToItsAsyncAPIMessage() async throws {
        let s = try await everyEventFixtures()
        let doc = AsyncAPIDocument.build(version: "test")
        let validator = JSONSchemaValidator(document: doc)
        func schema(_ name: String, ack: Bool = false) throws -> JSONValue {
            try XCTUnwrap(doc["components"]?["messages"]?[AsyncAPIDocument.key(name) + (ack ? ".ack" : "")]?["payload"], "no message for \(name)")
        }

        // Each client event once over a socket, its ack checked against the declaration's reply.
        let socket = try await PollingSocket.connect(base: live.base, token: s.bob)
        var ackId = 0
        var handled: Set<String> = []
        func call(_ event: String, _ payload: JSONObject) async throws -> JSONValue {
            ackId += 1
            let prefix = "43\(ackId)["
            try await socket.emit(event, .object(payload), ackId: ackId)
            let packets = try await socket.receive(until: { $0.hasPrefix(prefix) })
            let packet = try XCTUnwrap(packets.first { $0.hasPrefix(prefix) })
            let ack = try XCTUnwrap(try JSONValue.parse(String(packet.dropFirst(prefix.count - 1)))[0])
            XCTAssertEqual(validator.validate(ack, against: try schema(event, ack: true)), [], "\(event) ack \(ack.serializedString())")
            handled.insert(event)
            return ack
        }
        let room = JSONValue.string(s.room)
        let joined = try await call("room:join", ["roomId": room])
        XCTAssertEqual(joined["elementCount"], 1)
        let created = try await call("element:create", ["roomId": room, "type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4])
        let id = try XCTUnwrap(created["element"]?["id"])
        _ = try await call("element:update", ["roomId": room, "elementId": id, "content": "edited"])
        _ = try await call("element:reaction:toggle", ["roomId": room, "elementId": id])
        _ = try await call("element:delete", ["roomId": room, "elementId": id])
        _ = try await call("room:clear", ["roomId": room])
        _ = try await call("room:leave", ["roomId": room])
        let refused = try await call("room:join", ["roomId": "nope"])
        XCTAssertEqual(refused["error"]?["code"], "NOT_FOUND", "an error ack is the Error object of the reply")
        XCTAssertEqual(handled, AsyncAPITests.names(.clientToServer), "every client event was exercised")

        // Every server event (the REST writes cause the rest), each payload against its message.
        _ = try await causeEveryEvent(s)
        var emitted: Set<String> = []
        for e in try await loggedEvents(since: s.since) {
            let name = try XCTUnwrap(e["event"]?.stringValue)
            let payload = try XCTUnwrap(e["payload"])
            XCTAssertEqual(validator.validate(payload, against: try schema(name)), [], "\(name) \(payload.serializedString())")
            emitted.insert(name)
        }
        XCTAssertEqual(emitted, AsyncAPITests.names(.serverToClient), "every declared server event was emitted, and nothing else")
    }
}
