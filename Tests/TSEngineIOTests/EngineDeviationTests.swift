import Logging
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSEngineIO

/// The four deviations from the reference server that made the official suites fail,
/// each pinned down deterministically.
final class EngineDeviationLiveTests: XCTestCase {
    let harness = EngineLiveHarness()
    var port: Int { harness.port }
    func start() throws { try harness.start() }
    func get(_ q: String) -> RawHTTP.Response { harness.get(q) }
    func post(_ q: String, _ body: String) -> RawHTTP.Response { harness.post(q, body) }
    func openPolling() throws -> String { try harness.openPolling() }
    func pollInBackground(_ sid: String) -> TestFuture<RawHTTP.Response> { harness.pollInBackground(sid) }
    override func tearDown() { harness.stop() }

    /// (a) A second WebSocket for an already-upgraded sid completes its 101 handshake and is
    /// then closed at once; the first keeps working (reference `onWebSocket`).
    func testSecondWebSocketForUpgradedSidGets101ThenCloseAndFirstKeepsWorking() throws {
        try start()
        let sid = try openPolling()
        let first = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(first.status, 101)
        first.send("2probe")
        XCTAssertEqual(first.receive(), .text("3probe"))
        first.send("5")

        let second = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(second.status, 101, "the handshake completes, as on the reference server")
        XCTAssertEqual(second.receive(), .close, "then the new socket is closed at once")

        first.send("4hello")
        XCTAssertEqual(first.receiveSkippingPings(), .text("4hello"))
    }

    /// (a) The same while the first socket is still probing.
    func testSecondWebSocketDuringProbeIsClosedAndUpgradeStillCompletes() throws {
        try start()
        let sid = try openPolling()
        let first = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        first.send("2probe")
        XCTAssertEqual(first.receive(), .text("3probe"))
        let second = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(second.status, 101)
        XCTAssertEqual(second.receive(), .close)
        first.send("5")
        first.send("4after")
        XCTAssertEqual(first.receiveSkippingPings(), .text("4after"))
    }

    /// (a) An unknown sid is still refused before the handshake (400), as the reference does.
    func testWebSocketWithUnknownSidIs400() throws {
        try start()
        let ws = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=nope")
        XCTAssertEqual(ws.status, 400)
    }

    /// (c) The client's close (`1` in a POST) handled before the GET of the same long-poll cycle
    /// (which another loop may run later): that GET still gets the `6` it would have got
    /// parked, and only a later GET gets 400 Session ID unknown.
    func testGetHandledAfterTheClientsCloseIsAnsweredNoopOnce() throws {
        try start()
        let sid = try openPolling()
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "1").status, 200)
        let racing = get("EIO=4&transport=polling&sid=\(sid)")
        XCTAssertEqual(racing.status, 200)
        XCTAssertEqual(racing.text, "6")
        let later = get("EIO=4&transport=polling&sid=\(sid)")
        XCTAssertEqual(later.status, 400)
        XCTAssertTrue(later.text.contains("Session ID unknown"), later.text)
    }

    /// (c) With the GET parked first, it gets the `6` and nothing is owed afterwards.
    func testParkedGetGetsNoopOnClientCloseAndNextGetIs400() throws {
        try start()
        let sid = try openPolling()
        let parked = pollInBackground(sid)
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "1").status, 200)
        XCTAssertEqual(parked.wait()?.text, "6")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
    }

    /// (c) A server-side close owes nothing: the next GET is 400.
    func testInvalidPacketCloseOwesNoReply() throws {
        try start()
        let sid = try openPolling()
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "abc").status, 400)
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
    }
}

/// (d) The polling ping timeout is on time: a request that comes once pingInterval + pingTimeout
/// have passed finds the session closed, even if the timer that closes it has not run (here the
/// clock is manual and the loop is never given the chance to run it).
final class EnginePingDeadlineTests: XCTestCase, ManualClockEngineTesting {
    /// An engine (pingInterval 300 ms, pingTimeout 200 ms) whose time is a `ManualClock`, with one
    /// polling session open; the caller shuts the loop down.
    func openSessionOnManualClock() async throws -> (ManualClock, EventLoop, EngineIOServer, String) {
        let (clock, loop, engine) = try manualClockEngine(pingInterval: .milliseconds(300), pingTimeout: .milliseconds(200))
        let open = await engine.handle(request(.GET, "EIO=4&transport=polling"))
        do {
            return (clock, loop, engine, try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue))
        } catch {
            loop.shutdown()
            throw error
        }
    }

    func testPollingSessionIsClosedAtIntervalPlusTimeoutEvenBeforeItsTimerRuns() async throws {
        let (clock, loop, engine, sid) = try await openSessionOnManualClock()
        defer { loop.shutdown() }
        // 499 ms: still open (the GET would park; use a POST, which answers at once).
        clock.advance(by: 499 * ms)
        let before = await engine.handle(request(.POST, "EIO=4&transport=polling&sid=\(sid)", body: "4x"))
        XCTAssertEqual(before.status, 200)
        // 500 ms = pingInterval + pingTimeout: closed, whether or not a timer has fired.
        clock.advance(by: 1 * ms)
        let at = await engine.handle(request(.POST, "EIO=4&transport=polling&sid=\(sid)", body: "4y"))
        XCTAssertEqual(at.status, 400)
        let poll = await engine.handle(request(.GET, "EIO=4&transport=polling&sid=\(sid)"))
        XCTAssertEqual(poll.status, 400)
        XCTAssertNil(engine.session(id: sid))
    }

    func testPostAfterTheDeadlineIs400() async throws {
        let (clock, loop, engine, sid) = try await openSessionOnManualClock()
        defer { loop.shutdown() }
        clock.advance(by: 500 * ms)
        let late = await engine.handle(request(.POST, "EIO=4&transport=polling&sid=\(sid)", body: "3"))
        XCTAssertEqual(late.status, 400)
    }
}

/// (b) Set-up pacing: the packets sent while writes are paced leave one per write, each only
/// after the previous one has been flushed; later packets are not held back once drained.
final class EnginePacedWriteTests: XCTestCase {
    /// Records what the session hands to its WebSocket, and holds each paced write's
    /// completion until the test releases it.
    final class RecordingTransport: EngineWebSocketTransport, @unchecked Sendable {
        // @unchecked Sendable: `log` and `completions` are only touched under `lock`.
        let lock = Mutex()
        var log: [String] = []
        var completions: [@Sendable () -> Void] = []
        func engineSend(text: String) { lock.withLock { log.append("text:" + text) } }
        func engineSend(binary: [UInt8]) { lock.withLock { log.append("binary") } }
        func engineSend(frame: [UInt8]) { lock.withLock { log.append("frame:" + Self.text(frame)) } }
        func engineSend(frame: [UInt8], thenAfter gapNanoseconds: UInt64, _ next: @escaping @Sendable () -> Void) {
            lock.withLock {
                log.append("paced:" + Self.textOfFrames(frame).joined(separator: "|"))
                completions.append(next)
            }
        }
        /// Payloads of consecutive small unmasked text frames.
        static func textOfFrames(_ bytes: [UInt8]) -> [String] {
            var out: [String] = []
            var i = 0
            while i + 2 <= bytes.count {
                let n = Int(bytes[i + 1] & 0x7F)
                out.append(String(decoding: bytes[(i + 2)..<min(bytes.count, i + 2 + n)], as: UTF8.self))
                i += 2 + n
            }
            return out
        }
        func engineClose() { lock.withLock { log.append("close") } }
        func engineGoAway() { lock.withLock { log.append("go away") } }
        func engineDrop(reset: Bool) { lock.withLock { log.append("drop") } }
        func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void) { body() }
        /// The broadcast fast path's requirements: the engine's timer loop stands in for the
        /// connection's loop, and a broadcast frame is recorded as `broadcast:`.
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func sendFrameBytesOnLoop(_ bytes: [UInt8]) { lock.withLock { log.append("broadcast:" + Self.textOfFrames(bytes).joined(separator: "|")) } }
        /// Payload of a small unmasked text frame.
        static func text(_ frame: [UInt8]) -> String { String(decoding: frame.dropFirst(2), as: UTF8.self) }
        /// Runs the oldest paced write's completion on the loop (where the transport runs it),
        /// and returns once the loop has run it.
        func completeNext() -> Bool {
            let c: (@Sendable () -> Void)? = lock.withLock { completions.isEmpty ? nil : completions.removeFirst() }
            guard let c else { return false }
            loop.execute(c)
            loop.waitForTurns(1)
            return true
        }
        var entries: [String] { lock.withLock { log } }
    }

    /// A session of a fresh server whose WebSocket is a `RecordingTransport` (wrapped for pacing
    /// as the server wraps a real one).
    func webSocketSession(_ configuration: EngineIOConfiguration) throws -> (EngineIOServer, EngineIOSession, RecordingTransport) {
        let engine = try EngineIOServer(configuration: configuration, logger: Logger(label: "test"))
        let session = engine.makeSession(transport: .websocket, handshake: EngineHandshakeInfo(query: [:], headers: [], remoteAddress: nil))
        let ws = RecordingTransport(loop: engine.timerLoop)
        session.startWebSocket(engine.engineTransport(for: ws))
        return (engine, session, ws)
    }

    func testWithoutPacingSetUpPacketsAreWrittenAsTheyCome() throws {
        // The default (`touchsync serve`): real clients parse every frame of a read, so nothing
        // waits for the CONNECT reply's write to complete.
        XCTAssertNil(EngineIOConfiguration().setupPacing)
        let (engine, session, ws) = try webSocketSession(EngineIOConfiguration())
        defer { engine.closeAll() }
        session.withPacedWrites {
            session.send(text: "0{\"sid\":\"x\"}")
            session.send(text: "2[\"auth\",{}]")
        }
        XCTAssertEqual(ws.entries.filter { !$0.hasPrefix("text:0{") }, ["frame:40{\"sid\":\"x\"}", "frame:42[\"auth\",{}]"],
                       "each packet written at once, none held behind a paced write")
        XCTAssertFalse(ws.completeNext(), "no paced write to complete")
    }

    func testTheConnectReplyLeavesAloneAndTheRestTogetherAfterIt() throws {
        var configuration = EngineIOConfiguration()
        configuration.setupPacing = .officialTestSuite
        let (engine, session, ws) = try webSocketSession(configuration)
        defer { engine.closeAll() }
        session.withPacedWrites {
            session.send(text: "0{\"sid\":\"x\"}")
            session.send(text: "2[\"auth\",{}]")
            session.send(text: "2[\"more\"]")
        }
        // A broadcast reaches the WebSocket through a hop to its loop; a packet sent after it
        // from this thread must not overtake it.
        let direct = try XCTUnwrap(session.activeWebSocket)
        ws.loop.execute { direct.sendFrameBytesOnLoop(EngineWebSocketFraming.textFrame(Array("4broadcast".utf8))) }
        session.send(text: "after")
        ws.loop.waitForTurns(1)
        XCTAssertEqual(ws.entries.filter { !$0.hasPrefix("text:0{") }, ["paced:40{\"sid\":\"x\"}"],
                       "only the CONNECT reply is written until that write completes")
        XCTAssertTrue(ws.completeNext())
        XCTAssertEqual(ws.entries.last, "paced:42[\"auth\",{}]|42[\"more\"]|4broadcast|4after",
                       "then everything queued meanwhile, in order, in one write")
        XCTAssertTrue(ws.completeNext())
        XCTAssertFalse(ws.completeNext())
        session.send(text: "normal")
        ws.loop.waitForTurns(1)
        XCTAssertEqual(ws.entries.last, "broadcast:4normal", "once drained, writes are not paced any more (written on the loop)")
    }
}

/// A polling request that comes right after the client sent `2probe` and `5` on its new
/// WebSocket is handled after them (as on the single-threaded reference, where the WebSocket's
/// bytes are read first): the GET is refused, the upgrade done. Repeated, since without the
/// ordering it fails only when the probe's loop is slower than the GET's.
final class EngineProbeOrderLiveTests: XCTestCase {
    let harness = EngineLiveHarness()
    override func tearDown() { harness.stop() }

    func testGetRightAfterProbeAndUpgradeIsRefused() throws {
        try harness.start()
        for _ in 0..<20 {
            let sid = try harness.openPolling()
            let ws = try RawWebSocketClient(port: harness.port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
            XCTAssertEqual(ws.status, 101)
            ws.send("2probe")
            ws.send("5")
            XCTAssertEqual(harness.get("EIO=4&transport=polling&sid=\(sid)").status, 400)
            ws.send("4hello")
            XCTAssertEqual(ws.receiveSkippingPings(), .text("3probe"))
            XCTAssertEqual(ws.receiveSkippingPings(), .text("4hello"))
        }
    }
}
