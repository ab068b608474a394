import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TSApp
import TSDomain
@testable import TSEngineIO
import TSJSON
import TSTestSupport
import XCTest

/// Transport limits and shutdown, against the real server over real sockets: a room of
/// 20,000 elements loads over REST and over `room:join` (WebSocket and polling) although each
/// answer is far larger than the outbound bounds, a client that stops reading is still dropped,
/// a trickled long-poll POST gets 408, and a stop with idle clients is immediate and tells them
/// why.
final class TransportLiveTests: XCTestCase, @unchecked Sendable {
    // Invariant: XCTest runs setUp, the test and tearDown of one instance one after another.
    var live: LiveServer?

    override func tearDown() async throws {
        await live?.stop()
        live = nil
    }

    func start(_ overrides: [String: JSONValue] = [:]) throws -> LiveServer {
        var o: [String: JSONValue] = [
            "server.maxOutboundBytesPerConnection": 1_048_576,
            "realtime.maxOutboundBytesPerSocket": 262_144,
        ]
        for (k, v) in overrides { o[k] = v }
        let server = try LiveServer(overrides: o)
        live = server
        return server
    }

    /// A user, a room of theirs and `count` elements in it (through the domain, 64 writes in flight).
    func seedRoom(_ live: LiveServer, elements count: Int) async throws -> (TestUser, String) {
        let api = APIClient(base: live.base)
        let owner = try await api.register("big\(UInt32.random(in: 0...UInt32.max))")
        let r = try await api.post("/api/rooms", ["memberIds": []], token: owner.token)
        XCTAssertEqual(r.status, 201)
        guard let roomId = r.json["data"]?["id"]?.stringValue else { throw XCTSkip("room not created: \(r.status)") }
        let domain = live.server.domain
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func add() {
                let i = next
                next += 1
                group.addTask {
                    _ = try await domain.elements.create(roomId: roomId, actor: owner.id, input: Input([
                        "type": "note", "content": .string("element \(i) of a large room"), "positionX": .double(Double(i % 100) * 160),
                        "positionY": .double(Double(i / 100) * 160), "width": 150, "height": 150]), originSocketId: nil)
                }
            }
            while next < min(64, count) { add() }
            while try await group.next() != nil { if next < count { add() } }
        }
        return (owner, roomId)
    }

    func connectWebSocket(_ live: LiveServer, token: String, receiveBuffer: Int32? = nil) throws -> RawWebSocketClient {
        let ws = try RawWebSocketClient(port: live.port, receiveBuffer: receiveBuffer, timeoutSeconds: 10)
        try ws.handshake(path: "/socket.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { throw RawTCPClient.ClientError.badResponse("no open packet") }
        ws.send("40" + JSONValue.object(["token": .string(token)]).serializedString())
        guard case .text(let connected) = ws.receive(), connected.hasPrefix("40{") else { throw RawTCPClient.ClientError.badResponse("no CONNECT answer") }
        return ws
    }

    func testRoomOf20000ElementsLoadsOverRESTAndRoomJoinWhileAStoppedReaderIsDropped() async throws {
        let live = try start(["server.outboundStallTimeoutSeconds": 1])
        let (owner, roomId) = try await seedRoom(live, elements: 20_000)
        let api = APIClient(base: live.base)

        // REST: before, a response over maxOutboundBytesPerConnection closed the connection unsent.
        let list = try await api.get("/api/rooms/\(roomId)/elements", token: owner.token)
        XCTAssertEqual(list.status, 200)
        XCTAssertGreaterThan(list.body.count, 1_048_576, "the answer is larger than the bound")
        XCTAssertEqual(list.json["data"]?.arrayValue?.count ?? list.json["data"]?["elements"]?.arrayValue?.count, 20_000)
        let room = try await api.get("/api/rooms/\(roomId)", token: owner.token)
        XCTAssertEqual(room.status, 200)

        // room:join over WebSocket: before, the one elements:batch passed the 1 MiB (here 256 KiB)
        // socket bound and the socket was dropped without an ack.
        let ws = try connectWebSocket(live, token: owner.token)
        ws.send("420" + JSONValue.array(["room:join", .object(["roomId": .string(roomId)])]).serializedString())
        var batchCount: Int?
        var ack: String?
        while ack == nil {
            guard case .text(let t) = ws.receiveSkippingPings(timeout: 20) else { break }
            if t.hasPrefix("42[\"elements:batch\"") {
                XCTAssertGreaterThan(t.utf8.count, 262_144)
                batchCount = (try? JSONValue.parse(String(t.dropFirst(2))))?[1]?["elements"]?.arrayValue?.count
            } else if t.hasPrefix("430") {
                ack = t
            }
        }
        XCTAssertEqual(batchCount, 20_000)
        XCTAssertEqual((try? JSONValue.parse(String(ack?.dropFirst(3) ?? "")))?[0]?["elementCount"]?.intValue, 20_000, ack ?? "no ack")

        // room:join over long-polling: the batch waits for the next GET whole.
        let polling = try await PollingSocket.connect(base: live.base, token: owner.token)
        try await polling.emit("room:join", .object(["roomId": .string(roomId)]), ackId: 7)
        let packets = try await polling.receive(until: { $0.hasPrefix("437") }, polls: 5)
        let batch = packets.first { $0.hasPrefix("42[\"elements:batch\"") }
        XCTAssertEqual((try? JSONValue.parse(String(batch?.dropFirst(2) ?? "")))?[1]?["elements"]?.arrayValue?.count, 20_000)

        // A socket that stops reading (4 KiB receive window) is still dropped.
        let before = live.server.hub.stats.slowConsumersDisconnected
        let stalled = try connectWebSocket(live, token: owner.token, receiveBuffer: 4096)
        stalled.send("421" + JSONValue.array(["room:join", .object(["roomId": .string(roomId)])]).serializedString())
        let dropped = await until { live.server.hub.stats.slowConsumersDisconnected > before }
        XCTAssertTrue(dropped, "the reader that stopped is disconnected as a slow consumer")
        withExtendedLifetime(stalled) {}
    }

    func testTrickledLongPollPostGets408() async throws {
        let live = try start(["server.bodyReadTimeoutSeconds": 1])
        let api = APIClient(base: live.base)
        let user = try await api.register("trickle\(UInt32.random(in: 0...UInt32.max))")
        let polling = try await PollingSocket.connect(base: live.base, token: user.token)
        let client = try RawTCPClient(port: live.port, timeoutSeconds: 5)
        client.write("POST /socket.io/?EIO=4&transport=polling&sid=\(polling.engineSid) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     + "Content-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
        let start = Date()
        var got: [UInt8] = []
        // One byte every 100 ms, reading in between: the answer comes at the 1 s total deadline.
        for _ in 0..<40 {
            client.write("4")
            client.setReceiveTimeout(0.1)
            if case .bytes(let b) = client.read() { got += b }
            if RawHTTP.parse(got)?.complete == true { break }
        }
        let elapsed = Date().timeIntervalSince(start)
        let response = RawHTTP.parse(got)?.response
        XCTAssertEqual(response?.status, 408)
        XCTAssertEqual(response?.headers["connection"], "close")
        XCTAssertGreaterThanOrEqual(elapsed, 0.9)
        XCTAssertLessThan(elapsed, 3.5, "the trickle does not extend the deadline")
        client.setReceiveTimeout(3)
        XCTAssertTrue(client.readEOF())
    }

    func testStopWithIdleClientsIsQuickAndClosesTransportsLikeTheReference() async throws {
        // A stop with idle clients does not wait for the grace period, and it sends what the
        // reference server sends when its process exits: no Socket.IO DISCONNECT (clients would
        // take it as a kick and never reconnect after a restart), a WebSocket Close frame without
        // a status code (`ws.close()`), and a parked long-poll's connection closed unanswered
        // (an Engine.IO `1` there makes python-engineio stay away for good).
        let live = try start(["server.shutdownGraceSeconds": 10])
        let api = APIClient(base: live.base)
        let user = try await api.register("stop\(UInt32.random(in: 0...UInt32.max))")
        let ws = try connectWebSocket(live, token: user.token)
        let polling = try await PollingSocket.connect(base: live.base, token: user.token)
        let pendingPoll = try RawTCPClient(port: live.port, timeoutSeconds: 5)
        pendingPoll.write("GET /socket.io/?EIO=4&transport=polling&sid=\(polling.engineSid) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let keepAlive = try RawTCPClient(port: live.port, timeoutSeconds: 5)
        keepAlive.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        var health: [UInt8] = []
        while RawHTTP.parse(health)?.complete != true, case .bytes(let b) = keepAlive.read() { health += b }
        XCTAssertEqual(RawHTTP.parse(health)?.response.status, 200)
        let parked = await until(timeout: .seconds(5)) { live.server.hub.engine.allSessions.contains { $0.hasParkedPoll } }
        XCTAssertTrue(parked, "the poll is parked on the server")

        let start = Date()
        await live.stop()
        self.live = nil
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertLessThan(elapsed, 2, "a stop with idle clients does not wait for the grace period")

        // WebSocket: a Close frame with an empty body first (no `41` before it), then end of stream.
        let close = ws.nextFrame()
        XCTAssertEqual(close?.opcode, 8, "the first frame after the stop is the Close, not a DISCONNECT")
        XCTAssertEqual(close?.payload, [], "no status code, as `ws.close()` sends")
        XCTAssertNil(ws.nextFrame(), "then the TCP connection ends")
        // Polling: the parked GET gets no answer at all, its connection just ends.
        var answer: [UInt8] = []
        var ended = false
        reading: while true {
            switch pendingPoll.read(maxBytes: 1024) {
            case .bytes(let b): answer += b
            case .closed: ended = true; break reading
            default: break reading
            }
        }
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "", "no HTTP response, not even the Engine.IO close packet")
        XCTAssertTrue(ended, "the poll's connection is closed")
        XCTAssertTrue(keepAlive.readEOF(), "the idle keep-alive connection is closed")
    }
}
