import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Over a real socket against the real server: one change, one write per
/// socket. A room member's socket that joined the room receives `element:created` (room) and
/// `element:created:global` (its user's channel) for one creation; both frames arrive in the
/// same read, room event first (docs/realtime.md), where the members' read between the two
/// emits used to let the first one leave on its own.
final class RealtimeOneWriteTests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true, "realtime.pingIntervalMs": 20_000, "realtime.pingTimeoutMs": 20_000])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    func testRoomAndGlobalEventOfOneCreationArriveInOneReadInOrder() async throws {
        let (alice, bob, room) = try await api.aliceAndBobInOneRoom()

        let ws = try RawWebSocketClient(port: live.port, target: "/socket.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { return XCTFail("no Engine.IO open packet") }
        ws.send("40" + JSONValue.object(["token": .string(bob)]).serializedString())
        guard case .text(let connected) = ws.receiveSkippingPings(), connected.hasPrefix("40{") else { return XCTFail("not connected") }
        ws.send("421" + JSONValue.array([.string("room:join"), .object(["roomId": .string(room)])]).serializedString())
        var acked = false
        for _ in 0..<20 {
            guard case .text(let t) = ws.receiveSkippingPings() else { break }
            if t.hasPrefix("431[") { acked = true; break }
        }
        XCTAssertTrue(acked, "room:join was acknowledged")
        // Nothing else pending: whatever the join sent has been read.
        while case .text = ws.receive(timeout: 0.3) {}

        let api = self.api!
        let create = Task {
            try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10],
                               token: alice)
        }
        ws.setReceiveTimeout(5)
        guard case .bytes(let first) = ws.read() else { return XCTFail("nothing arrived after the creation") }
        let created = try await create.value
        XCTAssertEqual(created.status, 201)
        let texts = RawWebSocketFrame.decodeAll(first).map { String(decoding: $0.payload, as: UTF8.self) }
        XCTAssertGreaterThanOrEqual(texts.count, 2, "both events in the first read: \(texts)")
        XCTAssertTrue(texts.first?.hasPrefix("42[\"element:created\",") ?? false, "room event first: \(texts)")
        XCTAssertTrue(texts.dropFirst().first?.hasPrefix("42[\"element:created:global\",") ?? false, "then the global event: \(texts)")
    }
}
