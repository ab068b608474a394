import Logging
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSEngineIO

/// Records what the server's delegate saw and echoes messages (like the conformance server).
final class EchoRecorder: EngineIOServerDelegate, @unchecked Sendable {
    let lock = NSLock()
    var closed: [String: String] = [:]
    var opened = 0

    func sessionOpened(_ session: EngineIOSession, request: HTTPRequest) { lock.withLock { opened += 1 } }
    func session(_ session: EngineIOSession, didReceiveText text: String) {
        if text == "flood" {
            for i in 0..<100 { session.send(text: "flood \(i) " + String(repeating: "x", count: 100)) }
            return
        }
        session.send(text: text)
    }
    func session(_ session: EngineIOSession, didReceiveBinary bytes: [UInt8]) { session.send(binary: bytes) }
    func sessionClosed(_ session: EngineIOSession, reason: String) { lock.withLock { closed[session.id] = reason } }
    func reason(_ sid: String) -> String? { lock.withLock { closed[sid] } }
}

/// Live Engine.IO v4 tests over real sockets against an HTTPServer on port 0 (expectations
/// from the Engine.IO v4 protocol and its official test suite).
final class EngineIOLiveTests: XCTestCase {
    let harness = EngineLiveHarness()
    var engine: EngineIOServer! { harness.engine }
    var recorder: EchoRecorder { harness.recorder }
    var port: Int { harness.port }

    func start(_ configure: (inout EngineIOConfiguration) -> Void = { _ in }) throws {
        try harness.start(maxBodyBytes: 2_000_000, configure)
    }

    override func tearDown() { harness.stop() }

    func get(_ q: String) -> RawHTTP.Response { harness.get(q) }
    func post(_ q: String, _ body: String) -> RawHTTP.Response { harness.post(q, body) }
    func openPolling() throws -> String { try harness.openPolling() }
    func pollInBackground(_ sid: String) -> TestFuture<RawHTTP.Response> { harness.pollInBackground(sid) }

    /// A websocket session with its open packet consumed.
    func openWebSocket() throws -> RawWebSocketClient {
        let ws = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket")
        _ = ws.receive()
        return ws
    }

    // MARK: handshake

    func testPollingHandshakeFields() throws {
        try start()
        let r = get("EIO=4&transport=polling")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.body.first, UInt8(ascii: "0"))
        let v = try JSONValue.parse(Array(r.body.dropFirst()))
        XCTAssertEqual(Set(v.objectValue?.keys ?? []), ["sid", "upgrades", "pingInterval", "pingTimeout", "maxPayload"])
        XCTAssertEqual(v["upgrades"], ["websocket"])
        XCTAssertEqual(v["pingInterval"], 300)
        XCTAssertEqual(v["pingTimeout"], 200)
        XCTAssertEqual(v["maxPayload"], 1_000_000)
        let sid = try XCTUnwrap(v["sid"]?.stringValue)
        XCTAssertEqual(sid.count, 20)
        XCTAssertTrue(sid.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
    }

    func testWebSocketHandshakeFields() throws {
        try start()
        let ws = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive() else { return XCTFail("no open packet") }
        XCTAssertTrue(open.hasPrefix("0"))
        let v = try JSONValue.parse(String(open.dropFirst()))
        XCTAssertEqual(v["upgrades"], [])
        XCTAssertEqual(v["pingInterval"], 300)
        XCTAssertEqual(v["maxPayload"], 1_000_000)
    }

    func testHandshakeErrors() throws {
        try start()
        func check(_ r: RawHTTP.Response, code: Int, _ line: UInt = #line) {
            XCTAssertEqual(r.status, 400, line: line)
            XCTAssertEqual(r.headers["content-type"], "application/json", line: line)
            let v = try? JSONValue.parse(r.body)
            XCTAssertEqual(v?["code"]?.intValue, Int64(code), r.text, line: line)
            XCTAssertNotNil(v?["message"]?.stringValue, line: line)
        }
        check(get("transport=polling"), code: 5)
        check(get("EIO=abc&transport=polling"), code: 5)
        check(get("EIO=3&transport=polling"), code: 5)
        check(get("EIO=4"), code: 0)
        check(get("EIO=4&transport=abc"), code: 0)
        check(get("EIO=4&transport=polling&sid=nope"), code: 1)
        check(post("EIO=4&transport=polling", "4x"), code: 2)
        check(RawHTTP.request(port: port, "PUT", "/engine.io/?EIO=4&transport=polling"), code: 2)
        check(get("EIO=4&transport=websocket"), code: 3)  // websocket transport without an upgrade
        XCTAssertEqual(get("EIO=4&transport=polling&sid=nope").text, "{\"code\":1,\"message\":\"Session ID unknown\"}")
    }

    // MARK: messages

    func testPollingEchoTextAndBinary() throws {
        try start()
        let sid = try openPolling()
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "4hello").text, "ok")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").text, "4hello")
        let several = post("EIO=4&transport=polling&sid=\(sid)", "4test1\u{1e}4test2\u{1e}4test3")
        XCTAssertEqual(several.status, 200)
        XCTAssertEqual(several.headers["content-type"], "text/html; charset=UTF-8")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").text, "4test1\u{1e}4test2\u{1e}4test3")
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "4hello\u{1e}bAQIDBA==").text, "ok")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").text, "4hello\u{1e}bAQIDBA==")
    }

    func testWebSocketEchoTextAndBinary() throws {
        try start()
        let ws = try openWebSocket()
        ws.send("4hello")
        XCTAssertEqual(ws.receive(), .text("4hello"))
        ws.send(binary: [1, 2, 3, 4])
        XCTAssertEqual(ws.receive(), .binary([1, 2, 3, 4]))
    }

    func testInvalidPacketClosesSession() throws {
        try start()
        let sid = try openPolling()
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "abc").status, 400)
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
        XCTAssertEqual(recorder.reason(sid), EngineCloseReason.parseError)

        let ws = try openWebSocket()
        ws.send("abc")
        XCTAssertEqual(ws.receive(), .close)
    }

    func testDuplicatePollClosesSession() throws {
        try start()
        let sid = try openPolling()
        let first = pollInBackground(sid)
        let second = get("EIO=4&transport=polling&sid=\(sid)&t=burst")
        XCTAssertEqual(second.status, 400)
        let r = first.wait()
        XCTAssertEqual(r?.status, 200)
        XCTAssertEqual(r?.text, "1")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
    }

    func testPayloadOverMaxPayloadIs413AndCloses() throws {
        try start { $0.maxPayload = 100 }
        let sid = try openPolling()
        let r = post("EIO=4&transport=polling&sid=\(sid)", "4" + String(repeating: "a", count: 200))
        XCTAssertEqual(r.status, 413)
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
        XCTAssertEqual(recorder.reason(sid), EngineCloseReason.payloadTooLarge)
    }

    func testPollingSlowConsumerIsClosed() throws {
        try start { $0.maxBufferedPacketsBytes = 4096 }
        let sid = try openPolling()
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "4flood").status, 200)
        XCTAssertEqual(recorder.reason(sid), EngineCloseReason.slowConsumer)
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
    }

    // MARK: heartbeat

    func testPollingPingPongAndTimeout() throws {
        try start()
        let sid = try openPolling()
        let rounds = EngineHeartbeatCheck.pollingPingPong(rounds: 2, poll: { get("EIO=4&transport=polling&sid=\(sid)") },
                                                          pong: { post("EIO=4&transport=polling&sid=\(sid)", "3") })
        XCTAssertEqual(rounds, Array(repeating: EngineHeartbeatCheck.answeredRound, count: 2))
        XCTAssertNil(recorder.reason(sid), "answered pings keep the session open")
        let idle = try openPolling()
        XCTAssertTrue(EngineHeartbeatCheck.pollingSessionCloses(pingInterval: 300, pingTimeout: 200) { get("EIO=4&transport=polling&sid=\(idle)") })
        // The refused GET can come before the delegate has heard of the close: wait for it.
        XCTAssertTrue(blockUntil(timeout: .seconds(5)) { recorder.reason(idle) != nil }, "the delegate heard of the close")
        XCTAssertEqual(recorder.reason(idle), EngineCloseReason.pingTimeout)
    }

    func testWebSocketPingPongAndTimeout() throws {
        try start()
        let ws = try openWebSocket()
        for _ in 0..<2 {
            XCTAssertEqual(ws.receive(timeout: 1), .text("2"))
            ws.send("3")
        }
        // Stop answering: the server closes after pingInterval + pingTimeout.
        XCTAssertEqual(ws.receive(timeout: 1), .text("2"))
        XCTAssertEqual(ws.receive(timeout: 1), .close)
    }

    // MARK: close

    func testForcedCloseOverPolling() throws {
        try start()
        let sid = try openPolling()
        let poll = pollInBackground(sid)
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "1").status, 200)
        XCTAssertEqual(poll.wait()?.text, "6")
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
        XCTAssertEqual(recorder.reason(sid), EngineCloseReason.transportClose)
    }

    func testForcedCloseOverWebSocket() throws {
        try start()
        let ws = try openWebSocket()
        ws.send("1")
        XCTAssertEqual(ws.receive(), .close)
    }

    func testServerCloseAnswersPendingPollWithClosePacket() throws {
        try start()
        let sid = try openPolling()
        let poll = pollInBackground(sid)
        engine.session(id: sid)?.close()
        XCTAssertEqual(poll.wait()?.text, "1")
    }

    // MARK: upgrade

    func testUpgradeFromPollingToWebSocket() throws {
        try start()
        let sid = try openPolling()
        let ws = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(ws.status, 101)
        ws.send("2probe")
        XCTAssertEqual(ws.receive(), .text("3probe"))
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").text, "6")  // noop ends the poll
        ws.send("5")
        ws.send("4hello")
        XCTAssertEqual(ws.receive(), .text("4hello"))
        XCTAssertEqual(engine.session(id: sid)?.transport, .websocket)
        // After the upgrade: polling with that sid is refused; a second websocket completes its
        // handshake and is closed at once (as on the reference server).
        XCTAssertEqual(get("EIO=4&transport=polling&sid=\(sid)").status, 400)
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "4x").status, 400)
        let second = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(second.status, 101)
        XCTAssertEqual(second.receive(), .close)
        ws.send("4still")
        XCTAssertEqual(ws.receive(), .text("4still"))
    }

    func testProbeAnswersPendingPollWithNoop() throws {
        try start()
        let sid = try openPolling()
        let poll = pollInBackground(sid)
        let ws = try RawWebSocketClient(port: port, target: "/engine.io/?EIO=4&transport=websocket&sid=\(sid)")
        ws.send("2probe")
        XCTAssertEqual(ws.receive(), .text("3probe"))
        XCTAssertEqual(poll.wait()?.text, "6")
        // Packets queued before the `5` travel over the websocket once the upgrade completes.
        XCTAssertEqual(post("EIO=4&transport=polling&sid=\(sid)", "4queued").status, 200)
        ws.send("5")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("4queued"))
    }

    // MARK: CORS

    func testCORSAllowList() throws {
        try start { $0.allowedOrigins = ["https://app.example"] }
        let ok = RawHTTP.request(port: port, "GET", "/engine.io/?EIO=4&transport=polling", headers: ["Origin": "https://app.example"])
        XCTAssertEqual(ok.headers["access-control-allow-origin"], "https://app.example")
        XCTAssertEqual(ok.headers["access-control-allow-credentials"], "true")
        let evil = RawHTTP.request(port: port, "GET", "/engine.io/?EIO=4&transport=polling", headers: ["Origin": "https://evil.example"])
        XCTAssertEqual(evil.status, 200)
        XCTAssertNil(evil.headers["access-control-allow-origin"])
        let pre = RawHTTP.request(port: port, "OPTIONS", "/engine.io/?EIO=4&transport=polling", headers: ["Origin": "https://app.example"])
        XCTAssertEqual(pre.status, 204)
        XCTAssertEqual(pre.headers["access-control-allow-origin"], "https://app.example")
        XCTAssertNotNil(pre.headers["access-control-allow-methods"])
    }
}
