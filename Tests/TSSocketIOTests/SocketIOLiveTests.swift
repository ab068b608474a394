import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSSocketIO

/// Live Socket.IO v5 tests over real sockets (expectations from the Socket.IO v5 protocol and
/// its official test suite), against a server set up like the conformance server's.
final class SocketIOLiveTests: XCTestCase {
    var live: SocketIOLiveServer?
    var io: SocketIOServer! { live?.io }
    var port: Int { live?.port ?? 0 }
    var disconnects: LockedValue<[String: String]> { live?.disconnects ?? LockedValue([:]) }

    func start(_ configure: @escaping (inout SocketIOConfiguration) -> Void = { _ in }) throws {
        live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.namespaces = ["/", "/custom"]
            $0.configure = configure
        }) { io in
            io.onConnect { socket in socket.emit("auth", [socket.handshake.auth ?? .object(JSONObject())]) }
            io.on("message", withAttachments: { socket, event, _ in
                socket.emit("message-back", event.args, attachments: event.attachments)
            })
            io.on("message-with-ack", withAttachments: { _, event, ack in ack?.send(event.args, attachments: event.attachments) })
            io.on("join") { socket, args, ack in
                if let room = args.first?.stringValue { socket.join(room) }
                ack?.send(["joined"])
            }
        }
    }

    override func tearDown() { live?.stop() }

    /// An Engine.IO websocket session (open packet consumed).
    func engineSocket(receiveBuffer: Int32? = nil) throws -> RawWebSocketClient {
        let ws = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket", receiveBuffer: receiveBuffer)
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive() else { XCTFail("no open packet"); return ws }
        XCTAssertTrue(open.hasPrefix("0{"))
        return ws
    }

    /// Connects to `/` and consumes the CONNECT reply and the `auth` event; returns the sid.
    @discardableResult
    func connectMain(_ ws: RawWebSocketClient) throws -> String {
        ws.send("40")
        guard case .text(let reply) = ws.receive() else { XCTFail("no connect reply"); return "" }
        XCTAssertTrue(reply.hasPrefix("40"), reply)
        let sid = try XCTUnwrap(try JSONValue.parse(String(reply.dropFirst(2)))["sid"]?.stringValue)
        XCTAssertEqual(ws.receive(), .text("42[\"auth\",{}]"))
        return sid
    }

    // MARK: connect

    func testConnectToMainNamespace() throws {
        try start()
        let ws = try engineSocket()
        ws.send("40")
        guard case .text(let reply) = ws.receive() else { return XCTFail() }
        XCTAssertTrue(reply.hasPrefix("40{"))
        let v = try JSONValue.parse(String(reply.dropFirst(2)))
        XCTAssertEqual(v.objectValue?.keys, ["sid"])
        XCTAssertEqual(ws.receive(), .text("42[\"auth\",{}]"))
        XCTAssertNotNil(io.socket(id: try XCTUnwrap(v["sid"]?.stringValue)))
        XCTAssertEqual(io.stats.websocketSockets, 1)
    }

    func testConnectWithAuthPayloadAndCustomNamespace() throws {
        try start()
        let ws = try engineSocket()
        ws.send("40{\"token\":\"123\"}")
        guard case .text(let r1) = ws.receive() else { return XCTFail() }
        XCTAssertTrue(r1.hasPrefix("40{\"sid\":"))
        XCTAssertEqual(ws.receive(), .text("42[\"auth\",{\"token\":\"123\"}]"))

        ws.send("40/custom,")
        guard case .text(let r2) = ws.receive() else { return XCTFail() }
        XCTAssertTrue(r2.hasPrefix("40/custom,{\"sid\":"), r2)
        XCTAssertEqual(ws.receive(), .text("42/custom,[\"auth\",{}]"))

        let ws2 = try engineSocket()
        ws2.send("40/custom,{\"token\":\"abc\"}")
        guard case .text(let r3) = ws2.receive() else { return XCTFail() }
        XCTAssertTrue(r3.hasPrefix("40/custom,"))
        XCTAssertEqual(ws2.receive(), .text("42/custom,[\"auth\",{\"token\":\"abc\"}]"))

        let ws3 = try engineSocket()
        ws3.send("40/,{\"token\":\"x\"}")  // main namespace named explicitly
        guard case .text(let r4) = ws3.receive() else { return XCTFail() }
        XCTAssertTrue(r4.hasPrefix("40{\"sid\":"))
        XCTAssertEqual(ws3.receive(), .text("42[\"auth\",{\"token\":\"x\"}]"))
    }

    func testUnknownNamespaceIsRefused() throws {
        try start()
        let ws = try engineSocket()
        ws.send("40/random")
        XCTAssertEqual(ws.receive(), .text("44/random,{\"message\":\"Invalid namespace\"}"))
    }

    func testAuthenticatorSeesQueryHeadersAndPayload() throws {
        try start()
        io.setAuthenticator { handshake, auth in
            let token = auth?["token"]?.stringValue ?? handshake.query["token"]
                ?? handshake.header("Authorization").map { String($0.dropFirst("Bearer ".count)) }
            return token == "good" ? .accept(userID: "u1", data: ["role": "admin"]) : .reject(message: "unauthorized")
        }
        let bad = try engineSocket()
        bad.send("40{\"token\":\"bad\"}")
        XCTAssertEqual(bad.receive(), .text("44{\"message\":\"unauthorized\"}"))

        let viaQuery = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket&token=good")
        _ = viaQuery.receive()
        viaQuery.send("40")
        guard case .text(let r) = viaQuery.receive() else { return XCTFail() }
        let sid = try XCTUnwrap(try JSONValue.parse(String(r.dropFirst(2)))["sid"]?.stringValue)
        let socket = try XCTUnwrap(io.socket(id: sid))
        XCTAssertEqual(socket.userID, "u1")
        XCTAssertEqual(socket.data, ["role": "admin"])
        XCTAssertEqual(socket.rooms, [sid])

        let viaPayload = try engineSocket()
        viaPayload.send("40{\"token\":\"good\"}")
        guard case .text(let r2) = viaPayload.receive() else { return XCTFail() }
        XCTAssertTrue(r2.hasPrefix("40{"))
    }

    // MARK: events

    func testEventAckAndBinaryRoundTrips() throws {
        try start()
        let ws = try engineSocket()
        try connectMain(ws)
        ws.send("42[\"message\",1,\"2\",{\"3\":[true]}]")
        XCTAssertEqual(ws.receive(), .text("42[\"message-back\",1,\"2\",{\"3\":[true]}]"))
        ws.send("42456[\"message-with-ack\",1,\"2\",{\"3\":[false]}]")
        XCTAssertEqual(ws.receive(), .text("43456[1,\"2\",{\"3\":[false]}]"))

        ws.send("452-[\"message\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]")
        ws.send(binary: [1, 2, 3])
        ws.send(binary: [4, 5, 6])
        XCTAssertEqual(ws.receive(), .text("452-[\"message-back\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]"))
        XCTAssertEqual(ws.receive(), .binary([1, 2, 3]))
        XCTAssertEqual(ws.receive(), .binary([4, 5, 6]))

        ws.send("452-789[\"message-with-ack\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]")
        ws.send(binary: [1, 2, 3])
        ws.send(binary: [4, 5, 6])
        XCTAssertEqual(ws.receive(), .text("462-789[{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]"))
        XCTAssertEqual(ws.receive(), .binary([1, 2, 3]))
        XCTAssertEqual(ws.receive(), .binary([4, 5, 6]))
    }

    /// A connection's events run one at a time in arrival order, also when a handler suspends
    /// and when the mailbox has drained and starts again (its Task ends while idle).
    func testEventsOfOneConnectionRunInOrderOneAtATime() throws {
        try start()
        let trace = LockedValue<(active: Int, maxActive: Int, order: [Int64])>((0, 0, []))
        io.on("slow") { _, args, ack in
            let n = args.first?.intValue ?? -1
            trace.withLock { $0.active += 1; $0.maxActive = max($0.maxActive, $0.active) }
            // Earlier events take longer: any overlap or reordering would show.
            await TestPause.work(.milliseconds(max(0, 5 - Int(n)) * 10))
            trace.withLock { $0.active -= 1; $0.order.append(n) }
            ack?.send([.int(n)])
        }
        let ws = try engineSocket()
        try connectMain(ws)
        for round in 0..<2 {
            for n in 0..<5 { ws.send("42\(n)[\"slow\",\(n)]") }
            for n in 0..<5 { XCTAssertEqual(ws.receive(), .text("43\(n)[\(n)]"), "round \(round)") }
        }
        let t = trace.current
        XCTAssertEqual(t.order, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
        XCTAssertEqual(t.maxActive, 1)
    }

    /// Packets from successive long-polling GETs until `count` have arrived (at most 5 polls): the
    /// CONNECT reply and the `auth` event may come in one poll or in two (Engine.IO v4 polling: a
    /// GET returns whatever is queued when it arrives).
    func poll(_ q: String, until count: Int, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        var packets: [String] = []
        for _ in 0..<5 where packets.count < count {
            let r = RawHTTP.request(port: port, "GET", q)
            XCTAssertEqual(r.status, 200, file: file, line: line)
            guard r.status == 200 else { break }
            packets += r.text.split(separator: "\u{1e}").map(String.init)
        }
        return packets
    }

    func testPollingEventRoundTrip() throws {
        try start()
        let open = RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling")
        let sid = try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue)
        let q = "/socket.io/?EIO=4&transport=polling&sid=\(sid)"
        XCTAssertEqual(RawHTTP.request(port: port, "POST", q, body: Array("40".utf8)).text, "ok")
        let connected = poll(q, until: 2)
        XCTAssertEqual(connected.count, 2, "\(connected)")
        guard connected.count == 2 else { return }
        XCTAssertTrue(connected[0].hasPrefix("40{\"sid\":"), connected[0])
        XCTAssertEqual(connected[1], "42[\"auth\",{}]")
        XCTAssertEqual(RawHTTP.request(port: port, "POST", q, body: Array("42[\"message\",\"hi\"]".utf8)).text, "ok")
        XCTAssertEqual(RawHTTP.request(port: port, "GET", q).text, "42[\"message-back\",\"hi\"]")
        XCTAssertEqual(io.stats.pollingSockets, 1)
    }

    func testServerEmitWithAck() async throws {
        try start()
        let ws = try engineSocket()
        let sid = try connectMain(ws)
        let socket = try XCTUnwrap(io.socket(id: sid))
        let pending = Task { await socket.emitWithAck("question", ["q"], timeout: .seconds(2)) }
        let reply = await Task.detached { ws.receive() }.value
        guard case .text(let text) = reply, text.hasPrefix("42") else { return XCTFail("\(reply)") }
        let id = text.dropFirst(2).prefix { $0.isNumber }
        XCTAssertEqual(text.dropFirst(2 + id.count), "[\"question\",\"q\"]")
        ws.send("43\(id)[\"answer\"]")
        let result = await pending.value
        XCTAssertEqual(try result.get(), ["answer"])
        let timedOut = await socket.emitWithAck("question", [], timeout: .milliseconds(100))
        XCTAssertEqual(timedOut.failureValue, .timeout)
    }

    func testConnectTimeoutClosesIdleConnection() throws {
        try start { $0.connectTimeout = .milliseconds(200) }
        let ws = try engineSocket()
        XCTAssertEqual(ws.receive(timeout: 2), .close)  // no CONNECT within connectTimeout
    }

    // MARK: invalid packets and disconnects

    func testMalformedPacketsCloseOnlyThatSession() throws {
        try start()
        let healthy = try engineSocket()
        try connectMain(healthy)
        for bad in ["4abc", "42{}", "42abc[\"message-with-ack\",1]", "42[]", "42[1]"] {
            let ws = try engineSocket()
            try connectMain(ws)
            ws.send(bad)
            XCTAssertEqual(ws.receive(), .close, bad)
        }
        let early = try engineSocket()
        early.send("4abc")  // before any CONNECT
        XCTAssertEqual(early.receive(), .close)
        healthy.send("42[\"message\",\"still here\"]")
        XCTAssertEqual(healthy.receive(), .text("42[\"message-back\",\"still here\"]"))
    }

    func testNamespaceDisconnect() throws {
        try start()
        let ws = try engineSocket()
        try connectMain(ws)
        ws.send("40/custom")
        guard case .text(let r) = ws.receive() else { return XCTFail() }
        let customSid = try XCTUnwrap(try JSONValue.parse(String(r.dropFirst("40/custom,".count)))["sid"]?.stringValue)
        _ = ws.receive()  // auth
        ws.send("41/custom")
        ws.send("42[\"message\",\"message to main namespace\"]")
        XCTAssertEqual(ws.receive(), .text("42[\"message-back\",\"message to main namespace\"]"))
        XCTAssertEqual(disconnects.current[customSid], "client namespace disconnect")
        XCTAssertNil(io.socket(id: customSid))
    }

    func testServerSideDisconnect() throws {
        try start()
        let ws = try engineSocket()
        let sid = try connectMain(ws)
        io.socket(id: sid)?.disconnect()
        XCTAssertEqual(ws.receive(), .text("41"))
        XCTAssertEqual(disconnects.current[sid], "server namespace disconnect")
        XCTAssertTrue(io.sockets(inRoom: sid).isEmpty)
    }

    // MARK: broadcast

    func testBroadcastToRoomExceptOneSocket() throws {
        try start()
        var clients: [(RawWebSocketClient, String)] = []
        for _ in 0..<3 {
            let ws = try engineSocket()
            let sid = try connectMain(ws)
            ws.send("421[\"join\",\"room1\"]")
            XCTAssertEqual(ws.receive(), .text("431[\"joined\"]"))
            clients.append((ws, sid))
        }
        // A polling member too.
        let open = RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling")
        let esid = try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue)
        let q = "/socket.io/?EIO=4&transport=polling&sid=\(esid)"
        _ = RawHTTP.request(port: port, "POST", q, body: Array("40".utf8))
        XCTAssertEqual(poll(q, until: 2).count, 2, "CONNECT reply and auth event")
        _ = RawHTTP.request(port: port, "POST", q, body: Array("42[\"join\",\"room1\"]".utf8))
        blockUntil { self.io.sockets(inRoom: "room1").count == 4 }
        XCTAssertEqual(io.sockets(inRoom: "room1").count, 4)

        let records = LockedValue<[SocketIOEmitRecord]>([])
        io.setEmitObserver { r in records.withLock { $0.append(r) } }
        let n = io.emit("element:created", [["id": "e1"]], to: .room("room1", except: clients[0].1))
        XCTAssertEqual(n, 3)
        XCTAssertEqual(clients[1].0.receive(), .text("42[\"element:created\",{\"id\":\"e1\"}]"))
        XCTAssertEqual(clients[2].0.receive(), .text("42[\"element:created\",{\"id\":\"e1\"}]"))
        XCTAssertEqual(clients[0].0.receive(timeout: 0.3), .timeout)
        XCTAssertEqual(RawHTTP.request(port: port, "GET", q).text, "42[\"element:created\",{\"id\":\"e1\"}]")
        XCTAssertEqual(records.current.first?.recipients, 3)
        XCTAssertEqual(records.current.first?.target, .room("room1"))
        XCTAssertEqual(records.current.first?.except, clients[0].1)

        io.emit("direct", ["x"], to: .socket(clients[0].1))
        XCTAssertEqual(clients[0].0.receive(), .text("42[\"direct\",\"x\"]"))
        io.socket(id: clients[1].1)?.leave("room1")
        XCTAssertEqual(io.emit("again", [], to: .room("room1")), 3)
        XCTAssertEqual(clients[1].0.receive(timeout: 0.3), .timeout)
    }

    /// One write per change: the events of one change (`emit(_: [SocketIOEmission])`) reach each
    /// WebSocket in one write, in the order given — one read holds both frames — while a socket
    /// that gets only one of them gets just that one, a polling socket gets both in one payload in
    /// the same order, and every room is recorded and counted as separate emits would be.
    func testEventsOfOneChangeLeaveInOneWritePerSocketInOrder() throws {
        try start()
        func joined(_ ws: RawWebSocketClient, _ rooms: [String]) {
            for (i, room) in rooms.enumerated() {
                ws.send("42\(i + 1)[\"join\",\"\(room)\"]")
                XCTAssertEqual(ws.receive(), .text("43\(i + 1)[\"joined\"]"))
            }
        }
        let a = try engineSocket()
        try connectMain(a)
        joined(a, ["room1", "u:a"])
        let b = try engineSocket()
        try connectMain(b)
        joined(b, ["room1"])
        let open = RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling")
        let esid = try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue)
        let q = "/socket.io/?EIO=4&transport=polling&sid=\(esid)"
        _ = RawHTTP.request(port: port, "POST", q, body: Array("40".utf8))
        XCTAssertEqual(poll(q, until: 2).count, 2, "CONNECT reply and auth event")
        _ = RawHTTP.request(port: port, "POST", q, body: Array("42[\"join\",\"room1\"]".utf8))
        _ = RawHTTP.request(port: port, "POST", q, body: Array("42[\"join\",\"u:a\"]".utf8))
        blockUntil { self.io.sockets(inRoom: "u:a").count == 2 }
        XCTAssertEqual(io.sockets(inRoom: "u:a").count, 2)

        let records = LockedValue<[SocketIOEmitRecord]>([])
        io.setEmitObserver { r in records.withLock { $0.append(r) } }
        let emittedBefore = io.stats.eventsEmitted
        let n = io.emit([SocketIOEmission("one", [["id": "e1"]], .room("room1", except: nil)),
                         SocketIOEmission("two", [["id": "e1"]], .rooms(["u:a", "u:nobody"]))])
        XCTAssertEqual(n, 5)
        a.setReceiveTimeout(3)
        guard case .bytes(let first) = a.read() else { return XCTFail("nothing arrived") }
        XCTAssertEqual(RawWebSocketFrame.decodeAll(first).map { String(decoding: $0.payload, as: UTF8.self) },
                       ["42[\"one\",{\"id\":\"e1\"}]", "42[\"two\",{\"id\":\"e1\"}]"], "both frames, in order, in one read")
        XCTAssertEqual(b.receive(), .text("42[\"one\",{\"id\":\"e1\"}]"))
        XCTAssertEqual(b.receive(timeout: 0.3), .timeout)
        XCTAssertEqual(RawHTTP.request(port: port, "GET", q).text, "42[\"one\",{\"id\":\"e1\"}]\u{1e}42[\"two\",{\"id\":\"e1\"}]")
        XCTAssertEqual(records.current.map(\.event), ["one", "two", "two"])
        XCTAssertEqual(records.current.map(\.target), [.room("room1"), .room("u:a"), .room("u:nobody")])
        XCTAssertEqual(records.current.map(\.recipients), [3, 2, 0])
        XCTAssertEqual(io.stats.eventsEmitted - emittedBefore, 5)
    }

    /// A socket is in the room named by its id (kept implicit in the adapter): an emit to its id
    /// reaches it, `leave(id)` takes it out, `join(id)` puts it back; `rooms` and the room count
    /// see the same.
    func testOwnRoomCanBeLeftAndJoinedAgain() throws {
        try start()
        let ws = try engineSocket()
        let sid = try connectMain(ws)
        let socket = try XCTUnwrap(io.socket(id: sid))
        XCTAssertEqual(socket.rooms, [sid])
        let roomsBefore = io.stats.rooms
        XCTAssertEqual(io.emit("mine", [], to: .room(sid)), 1)
        XCTAssertEqual(ws.receive(), .text("42[\"mine\"]"))
        socket.leave(sid)
        XCTAssertEqual(socket.rooms, [])
        XCTAssertEqual(io.stats.rooms, roomsBefore - 1)
        XCTAssertEqual(io.emit("gone", [], to: .room(sid)), 0)
        socket.join("other")
        socket.join(sid)
        XCTAssertEqual(socket.rooms, [sid, "other"])
        XCTAssertEqual(io.stats.rooms, roomsBefore + 1)
        XCTAssertEqual(io.emit("back", [], to: .room(sid)), 1)
        XCTAssertEqual(ws.receive(), .text("42[\"back\"]"))
        XCTAssertEqual(io.sockets(inRoom: "other").map(\.id), [sid])
    }

    func testSlowConsumerIsDisconnectedWhileOthersKeepReceiving() throws {
        // The bound leaves a reading client headroom for scheduling hiccups under load, while the
        // 8 MB sent is far more than the slow socket's kernel buffers (4 KiB receive window) plus
        // the bound can hold.
        try start { $0.maxOutboundBytesPerSocket = 1024 * 1024 }
        let slow = try engineSocket(receiveBuffer: 4096)
        let slowSid = try connectMain(slow)
        slow.send("421[\"join\",\"r\"]")
        XCTAssertEqual(slow.receive(), .text("431[\"joined\"]"))
        let fast = try engineSocket()
        try connectMain(fast)
        fast.send("421[\"join\",\"r\"]")
        XCTAssertEqual(fast.receive(), .text("431[\"joined\"]"))

        let big = String(repeating: "x", count: 8 * 1024)
        let fastReader = TestFuture.run { () -> Int in
            var got = 0
            while case .text(let t) = fast.receiveSkippingPings(timeout: 3), t.hasPrefix("42[\"big\"") { got += 1 }
            return got
        }
        for _ in 0..<1000 {
            io.emit("big", [.string(big)], to: .room("r"))
            TestPause.trickle(.microseconds(500))  // a steady producer: the fast reader keeps up, the slow one falls behind
        }
        io.emit("done", [], to: .room("r"))
        XCTAssertEqual(fastReader.wait(timeout: 20), 1000, "the fast socket got every packet")
        XCTAssertEqual(disconnects.current[slowSid], "slow consumer")
        XCTAssertEqual(io.stats.slowConsumersDisconnected, 1)
        XCTAssertGreaterThanOrEqual(io.stats.eventsDropped, 1, "the packet that overflowed is counted as dropped")
        XCTAssertGreaterThan(io.stats.eventsEmitted, 1000)
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let f) = self { return f } else { return nil } }
}
