import Logging
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSEngineIO
@testable import TSSocketIO

/// io_uring sends over real sockets against a real server on port 0: a broadcast's hop flushes
/// its WebSockets through the event loop's io_uring (`SendBatcher`), and each completion is
/// handled like a send(2) result. One event loop, so every socket of a broadcast is in one flush.
/// The loop's `SendCounters` tell which path ran (counted by the real code, not a mock).
final class BroadcastIORingLiveTests: XCTestCase {
    var live: SocketIOLiveServer?
    var io: SocketIOServer! { live?.io }
    var port: Int { live?.port ?? 0 }
    var loop: EventLoop!
    var disconnects: LockedValue<[String: String]> { live?.disconnects ?? LockedValue([:]) }

    func start(ioUring: IORingMode) throws {
        let live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.engine = EngineIOConfiguration(pingInterval: .seconds(20), pingTimeout: .seconds(20))
            $0.configure = { $0.maxOutboundBytesPerSocket = 16 << 20 }  // the slow reader's backlog stays within it
            $0.eventLoops = 1
            $0.ioUring = ioUring
        }) { io in
            io.on("join") { socket, args, ack in
                if let room = args.first?.stringValue { socket.join(room) }
                ack?.send(["joined"])
            }
        }
        self.live = live
        loop = try XCTUnwrap(live.http.eventLoopGroup?.loops.first)
    }

    /// Starts with the ring, or skips visibly when this kernel (or its seccomp profile) refuses it.
    func startWithRing() throws {
        try start(ioUring: .auto)
        guard loop.usesIORing else {
            throw XCTSkip("io_uring not available here (TOUCHSYNC_SERVER_IO_URING=off, or refused by the kernel: see the server's log line); the send(2) path is tested by the off test")
        }
    }

    override func tearDown() { live?.stop() }

    /// A Socket.IO socket on `/` that joined `room` (everything before the broadcast consumed).
    func joinedClient(_ room: String, receiveBuffer: Int32? = nil) throws -> (ws: RawWebSocketClient, sid: String) {
        let ws = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket", receiveBuffer: receiveBuffer)
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { throw RawTCPClient.ClientError.badResponse("no open packet") }
        ws.send("40")
        guard case .text(let reply) = ws.receive(), reply.hasPrefix("40") else { throw RawTCPClient.ClientError.badResponse("no connect reply") }
        let sid = try XCTUnwrap(try JSONValue.parse(String(reply.dropFirst(2)))["sid"]?.stringValue)
        ws.send("421[\"join\",\"\(room)\"]")
        XCTAssertEqual(ws.receive(), .text("431[\"joined\"]"))
        return (ws, sid)
    }

    /// A first broadcast everybody reads (ticks -3...-1), then a wait until every session takes
    /// the broadcast path these tests are about: a session whose set-up writes are still paced
    /// (EngineIOSession.withPacedWrites) has no `activeWebSocket` yet, and a broadcast queues
    /// behind its set-up writes instead.
    func settle(_ clients: [RawWebSocketClient]) {
        for k in -3 ..< 0 { broadcast(k, pad: 10) }
        for ws in clients { XCTAssertEqual(ticks(ws, 3), [-3, -2, -1]) }
        let engine = io.engine
        XCTAssertTrue(blockUntil { engine.allSessions.allSatisfy { $0.activeWebSocket != nil } }, "every session takes the broadcast path")
    }

    /// One broadcast through the batch path (as the REST fan-out sends): event `tick` with `k`.
    func broadcast(_ k: Int, pad: Int, room: String = "room") {
        _ = io.emit([SocketIOEmission("tick", [["k": .int(Int64(k)), "pad": .string(String(repeating: "x", count: pad))]], .room(room, except: nil))])
    }

    /// The `k` of each of the next `count` `tick` frames (stops early on a timeout or close).
    func ticks(_ ws: RawWebSocketClient, _ count: Int, timeout: Double = 5) -> [Int] {
        var out: [Int] = []
        while out.count < count {
            guard case .text(let t) = ws.receive(timeout: timeout) else { break }
            guard t.hasPrefix("42[\"tick\","), let v = try? JSONValue.parse(String(t.dropFirst(2))),
                  let k = v.arrayValue?.dropFirst().first?["k"]?.intValue else { continue }
            out.append(Int(k))
        }
        return out
    }

    func testABroadcastToManySocketsArrivesCompleteAndInOrderThroughTheRing() async throws {
        try startWithRing()
        var clients: [RawWebSocketClient] = []
        for _ in 0..<24 { clients.append(try joinedClient("room").ws) }
        settle(clients)
        let before = await loop.sendCounters()
        for k in 0..<30 { broadcast(k, pad: 300) }
        for (i, ws) in clients.enumerated() {
            XCTAssertEqual(ticks(ws, 30), Array(0..<30), "socket \(i): every broadcast, in order")
        }
        let after = await loop.sendCounters()
        XCTAssertGreaterThan(after.ringSubmissions, before.ringSubmissions, "the hops went through the ring")
        XCTAssertGreaterThanOrEqual(after.ringSends - before.ringSends, 24, "one ring send per socket per flush")
        XCTAssertEqual(after.ringShortSends, before.ringShortSends, "nobody was short of buffer")
    }

    /// A member that reads nothing (4 KB receive buffer) fills its socket: the ring's send to it
    /// completes short or with EAGAIN, the rest stays queued behind EPOLLOUT while the others
    /// get every broadcast at once; when it finally reads, everything arrives complete and in order.
    func testAReceiverThatDoesNotReadGetsEverythingInOrderOnceItReads() async throws {
        try startWithRing()
        var fast: [RawWebSocketClient] = []
        for _ in 0..<4 { fast.append(try joinedClient("room").ws) }
        let slow = try joinedClient("room", receiveBuffer: 4096).ws
        settle(fast + [slow])
        let before = await loop.sendCounters()
        // 600 x ~12 KB: more than the slow socket's buffers hold (on loopback the kernel may
        // grow the send buffer to tcp_wmem's maximum, 4 MB by default).
        let count = 600
        for k in 0..<count {
            broadcast(k, pad: 12_000)
            for (i, ws) in fast.enumerated() {
                XCTAssertEqual(ticks(ws, 1), [k], "fast socket \(i) is not held back by the slow one")
            }
        }
        let middle = await loop.sendCounters()
        XCTAssertGreaterThan(middle.ringShortSends, before.ringShortSends, "the slow socket's send completed short or with EAGAIN in the ring: \(before) -> \(middle)")
        XCTAssertEqual(io.stats.websocketSockets, 5, "the slow socket is still connected (within its backlog bound): \(disconnects.current)")
        XCTAssertEqual(ticks(slow, count, timeout: 10), Array(0..<count), "complete and in order once it reads")
        let after = await loop.sendCounters()
        XCTAssertGreaterThan(after.plainSends, middle.plainSends, "the rest went out once the socket was writable again")
    }

    /// A member resets its connection in the middle of a broadcast run: it is closed cleanly
    /// (its disconnect reported) and every other member still gets every broadcast in order.
    func testAClientThatResetsMidBroadcastIsClosedWithoutAffectingTheOthers() async throws {
        try startWithRing()
        var clients: [(ws: RawWebSocketClient, sid: String)] = []
        for _ in 0..<6 { clients.append(try joinedClient("room")) }
        settle(clients.map(\.ws))
        for k in 0..<10 { broadcast(k, pad: 500) }
        for c in clients { XCTAssertEqual(ticks(c.ws, 10), Array(0..<10)) }
        let victim = clients.removeLast()
        var lingerOption = linger(l_onoff: 1, l_linger: 0)  // closing the socket sends a reset
        _ = setsockopt(victim.ws.fd, SOL_SOCKET, SO_LINGER, &lingerOption, socklen_t(MemoryLayout<linger>.size))
        // Reset while broadcasts are in flight: from another thread, once a few of them left.
        let fewSent = DispatchSemaphore(value: 0)
        let resetter = Thread { _ = fewSent.wait(timeout: .now() + 10); victim.ws.resetForTest() }
        resetter.start()
        for k in 10..<60 {
            broadcast(k, pad: 500)
            if k == 12 { fewSent.signal() }
            // Spread out, so that the reset lands between flushes as well as during one.
            if k % 10 == 0 { TestPause.trickle(.milliseconds(1)) }
        }
        for (i, c) in clients.enumerated() {
            XCTAssertEqual(ticks(c.ws, 50), Array(10..<60), "socket \(i) got every broadcast in order")
        }
        let disconnects = self.disconnects
        XCTAssertTrue(blockUntil { disconnects.current[victim.sid] != nil }, "the reset socket was closed and its disconnect reported")
        XCTAssertEqual(io.stats.websocketSockets, 5)
        XCTAssertTrue(disconnects.current.keys.allSatisfy { $0 == victim.sid }, "nobody else was disconnected: \(disconnects.current)")
    }

    /// `server.ioUring = off`: the loop has no ring, and the same broadcast goes out with one
    /// send(2) per socket.
    func testWithTheSettingOffTheSendPathIsUsed() async throws {
        try start(ioUring: .off)
        XCTAssertFalse(loop.usesIORing)
        var clients: [RawWebSocketClient] = []
        for _ in 0..<5 { clients.append(try joinedClient("room").ws) }
        settle(clients)
        let before = await loop.sendCounters()
        for k in 0..<3 { broadcast(k, pad: 100) }
        for ws in clients { XCTAssertEqual(ticks(ws, 3), [0, 1, 2]) }
        let after = await loop.sendCounters()
        XCTAssertEqual(after.ringSends, 0)
        XCTAssertEqual(after.ringSubmissions, 0)
        XCTAssertGreaterThanOrEqual(after.plainSends - before.plainSends, 5, "one send(2) per socket per flush")
    }
}

extension RawTCPClient {
    /// Closes the client's socket (with SO_LINGER 0: a reset) by putting /dev/null on its
    /// descriptor number, so the object's own close(2) in deinit closes that instead of a
    /// descriptor some other test may have been given meanwhile.
    func resetForTest() {
        let null = open("/dev/null", O_RDONLY)
        guard null >= 0 else { return }
        _ = dup2(null, fd)
        _ = close(null)
    }
}
