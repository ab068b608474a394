import Foundation
import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSSocketIO

/// Connection state recovery (socket.io 4.6+) over real sockets, with a raw client sending what
/// socket.io-client sends: `40{…auth,"pid":…,"offset":…}` on reconnect, the offset being the
/// last argument of the last event it received.
final class RecoveryLiveTests: XCTestCase {
    var live: SocketIOLiveServer?
    var io: SocketIOServer? { live?.io }
    var port: Int { live?.port ?? 0 }

    func start(windowMs: Int = 5_000, maxPackets: Int = 100, maxSessionsPerUser: Int = 32, maxSessions: Int = 10_000,
               clock: any MonotonicClock = SystemClock()) throws {
        live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.clock = clock
            $0.configure = {
                $0.recoveryMaxDisconnection = .milliseconds(windowMs)
                $0.recoveryMaxBufferedPackets = maxPackets
                $0.recoveryMaxSessionsPerUser = maxSessionsPerUser
                $0.recoveryMaxSessions = maxSessions
            }
        }) { io in
            // Each user is the `user` field of the CONNECT auth payload.
            io.setAuthenticator { _, auth in .accept(userID: auth?["user"]?.stringValue ?? "anon", data: .null) }
            io.onConnect { socket in socket.emit("hello", [.bool(socket.recovered)]) }
            io.on("join") { socket, args, ack in
                if let room = args.first?.stringValue { socket.join(room) }
                ack?.send([true])
            }
        }
    }

    override func tearDown() { live?.stop() }

    struct Connected {
        let ws: RawWebSocketClient
        let sid: String
        let pid: String?
        let recovered: Bool
    }

    /// Opens a websocket session and sends `40<auth>`; returns what the CONNECT reply and the
    /// `hello` event said.
    func connect(_ auth: JSONValue) throws -> Connected? {
        let ws = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket")
        guard ws.status == 101, case .text(let open) = ws.receive(), open.hasPrefix("0") else { XCTFail("no session"); return nil }
        ws.send("40" + auth.serializedString())
        guard case .text(let reply) = ws.receiveSkippingPings(), reply.hasPrefix("40") else { XCTFail("no CONNECT reply"); return nil }
        let v = try JSONValue.parse(String(reply.dropFirst(2)))
        guard let sid = v["sid"]?.stringValue else { XCTFail("no sid in \(reply)"); return nil }
        var recovered = false
        var replayed: [String] = []
        while case .text(let t) = ws.receiveSkippingPings(), t.hasPrefix("42") {
            let args = try XCTUnwrap(try JSONValue.parse(String(t.dropFirst(2))).arrayValue)
            if args.first == "hello" {
                recovered = args.count > 1 && args[1] == .bool(true)
                break
            }
            replayed.append(t)
        }
        lastReplay = replayed
        return Connected(ws: ws, sid: sid, pid: v["pid"]?.stringValue, recovered: recovered)
    }
    var lastReplay: [String] = []

    /// The event's arguments without the offset, and the offset (its last argument).
    func event(_ m: RawWebSocketClient.Message) throws -> (name: String, args: [JSONValue], offset: String)? {
        guard case .text(let t) = m, t.hasPrefix("42") else { XCTFail("not an event: \(m)"); return nil }
        var args = try XCTUnwrap(try JSONValue.parse(String(t.dropFirst(2))).arrayValue)
        guard args.count >= 2, let offset = args.removeLast().stringValue, let name = args.first?.stringValue else {
            XCTFail("no offset in \(t)"); return nil
        }
        return (name, Array(args.dropFirst()), offset)
    }

    func waitForDisconnect() { XCTAssertEqual(live?.waitForDisconnect(), true, "the server saw the drop") }

    func testReconnectWithinTheWindowGetsSidRoomsAndMissedEventsInOrder() throws {
        try start()
        let io = try XCTUnwrap(self.io)
        guard let first = try connect(["user": "u1"]) else { return }
        XCTAssertNotNil(first.pid, "the CONNECT reply carries a pid: {\"sid\",\"pid\"}")
        XCTAssertFalse(first.recovered)
        first.ws.send("421[\"join\",\"r\"]")
        XCTAssertEqual(first.ws.receiveSkippingPings(), .text("431[true]"))

        io.emit("e", ["one"], to: .room("r"))
        guard let e1 = try event(first.ws.receiveSkippingPings()) else { return }
        XCTAssertEqual(e1.name, "e")
        XCTAssertEqual(e1.args, ["one"])

        // The network drops (no Engine.IO close): a recoverable disconnect.
        first.ws.closeSocket()
        waitForDisconnect()
        io.emit("e", ["two"], to: .room("r"))
        io.emit("other", ["not mine"], to: .room("elsewhere"))
        io.emit("e", ["three"], to: .room("r"))

        guard let back = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": .string(e1.offset)]) else { return }
        XCTAssertEqual(back.sid, first.sid, "same socket id")
        XCTAssertEqual(back.pid, first.pid)
        XCTAssertTrue(back.recovered, "recovered is visible to the connect handler")
        let missed = try lastReplay.map { try event(.text($0)) }
        XCTAssertEqual(missed.map { $0?.args }, [["two"], ["three"]], "every missed event of its rooms, in order, once")
        // Its rooms are back: the next room event reaches it.
        io.emit("e", ["four"], to: .room("r"))
        XCTAssertEqual(try event(back.ws.receiveSkippingPings())?.args, ["four"])
        XCTAssertEqual(io.socket(id: back.sid)?.rooms, [back.sid, "r"])
    }

    /// One token that connects and drops in a loop keeps at most its own allowance of sessions for
    /// the window (the oldest go first), and all users together at most `maxSessions`; the newest
    /// session of each is still recovered.
    func testKeptSessionsAreCappedPerUserAndInTotal() throws {
        try start(windowMs: 60_000, maxSessionsPerUser: 3, maxSessions: 5)
        let io = try XCTUnwrap(self.io)
        var drops: [(pid: String, offset: String)] = []
        for _ in 0..<10 {
            guard let c = try connect(["user": "looper"]), let pid = c.pid else { return XCTFail("no session") }
            c.ws.send("421[\"join\",\"r\"]")
            XCTAssertEqual(c.ws.receiveSkippingPings(), .text("431[true]"))
            io.emit("e", ["x"], to: .room("r"))
            guard let e = try event(c.ws.receiveSkippingPings()) else { return }
            c.ws.closeSocket()
            waitForDisconnect()
            drops.append((pid, e.offset))
        }
        var s = io.stats
        XCTAssertEqual(s.recoverySessions, 3, "one user's loop keeps its allowance, not a session per cycle")
        XCTAssertEqual(s.recoverySessionsEvictedPerUser, 7)

        for user in ["u2", "u3", "u4"] {
            guard let c = try connect(["user": .string(user)]) else { return }
            c.ws.closeSocket()
            waitForDisconnect()
        }
        s = io.stats
        XCTAssertEqual(s.recoverySessions, 5, "all users together keep maxSessions")
        XCTAssertEqual(s.recoverySessionsEvictedTotal, 1, "the oldest kept session made room")

        // The oldest of the looper's sessions is gone (a fresh session), its newest is recovered.
        guard let oldest = drops.first, let newest = drops.last else { return }
        let stale = try XCTUnwrap(try connect(["user": "looper", "pid": .string(oldest.pid), "offset": .string(oldest.offset)]))
        XCTAssertFalse(stale.recovered)
        let back = try XCTUnwrap(try connect(["user": "looper", "pid": .string(newest.pid), "offset": .string(newest.offset)]))
        XCTAssertTrue(back.recovered, "the newest session of the loop is still recoverable")
        XCTAssertEqual(back.pid, newest.pid)
    }

    func testPastTheWindowIsAFreshSession() throws {
        // The window is measured on the server's clock: moved past it, not waited out.
        let clock = ManualClock()
        try start(windowMs: 200, clock: clock)
        let io = try XCTUnwrap(self.io)
        guard let first = try connect(["user": "u1"]) else { return }
        first.ws.send("421[\"join\",\"r\"]")
        XCTAssertEqual(first.ws.receiveSkippingPings(), .text("431[true]"))
        io.emit("e", ["one"], to: .room("r"))
        guard let e1 = try event(first.ws.receiveSkippingPings()) else { return }
        first.ws.closeSocket()
        waitForDisconnect()
        clock.advance(by: 400_000_000)  // past maxDisconnectionDuration
        guard let back = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": .string(e1.offset)]) else { return }
        XCTAssertNotEqual(back.sid, first.sid)
        XCTAssertFalse(back.recovered)
        XCTAssertEqual(lastReplay, [])
        XCTAssertEqual(io.socket(id: back.sid)?.rooms, [back.sid])
    }

    func testUnknownOffsetAsAfterARestartIsAFreshSession() throws {
        try start()
        guard let first = try connect(["user": "u1"]) else { return }
        first.ws.closeSocket()
        waitForDisconnect()
        // An offset this process never issued (another process's, before a restart).
        guard let back = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": "AAAAAAAA-1"]) else { return }
        XCTAssertNotEqual(back.sid, first.sid)
        XCTAssertFalse(back.recovered)
    }

    func testAnotherUserCannotTakeOverASessionWithItsPid() throws {
        try start()
        let io = try XCTUnwrap(self.io)
        guard let first = try connect(["user": "u1"]) else { return }
        io.emit("e", ["one"], to: .room(first.sid))
        guard let e1 = try event(first.ws.receiveSkippingPings()) else { return }
        first.ws.closeSocket()
        waitForDisconnect()
        guard let thief = try connect(["user": "u2", "pid": .string(first.pid ?? ""), "offset": .string(e1.offset)]) else { return }
        XCTAssertNotEqual(thief.sid, first.sid)
        XCTAssertFalse(thief.recovered)
        // The attempt did not cost the owner its session.
        guard let owner = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": .string(e1.offset)]) else { return }
        XCTAssertEqual(owner.sid, first.sid)
        XCTAssertTrue(owner.recovered)
    }

    func testClientNamespaceDisconnectIsNotRecoverable() throws {
        try start()
        let io = try XCTUnwrap(self.io)
        guard let first = try connect(["user": "u1"]) else { return }
        io.emit("e", ["one"], to: .room(first.sid))
        guard let e1 = try event(first.ws.receiveSkippingPings()) else { return }
        first.ws.send("41")
        waitForDisconnect()
        guard let back = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": .string(e1.offset)]) else { return }
        XCTAssertFalse(back.recovered)
    }

    func testReplayBufferIsBounded() throws {
        try start(maxPackets: 3)
        let io = try XCTUnwrap(self.io)
        guard let first = try connect(["user": "u1"]) else { return }
        io.emit("e", ["zero"], to: .room(first.sid))
        guard let e0 = try event(first.ws.receiveSkippingPings()) else { return }
        first.ws.closeSocket()
        waitForDisconnect()
        for i in 1...5 { io.emit("e", [.int(Int64(i))], to: .room(first.sid)) }
        // Its offset fell out of the 3 kept events: a fresh session, not a partial replay.
        guard let back = try connect(["user": "u1", "pid": .string(first.pid ?? ""), "offset": .string(e0.offset)]) else { return }
        XCTAssertFalse(back.recovered)
        XCTAssertEqual(lastReplay, [])
    }

    func testWithoutRecoveryEventsCarryNoOffsetAndTheReplyNoPid() throws {
        try start(windowMs: 0)
        let io = try XCTUnwrap(self.io)
        guard let c = try connect(["user": "u1"]) else { return }
        XCTAssertNil(c.pid)
        io.emit("e", ["one"], to: .room(c.sid))
        XCTAssertEqual(c.ws.receiveSkippingPings(), .text("42[\"e\",\"one\"]"))
    }
}

extension RawTCPClient {
    /// Drops the TCP connection without any Engine.IO or WebSocket close (a network drop as the
    /// server sees it: the transport just ends).
    func closeSocket() { _ = shutdown(fd, Int32(SHUT_RDWR)) }
}
