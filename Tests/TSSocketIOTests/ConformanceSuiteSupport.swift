import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Shared set-up of the ported official suite cases: the real `conformance-server` on port 0,
/// with the suites' pingInterval 300 ms / pingTimeout 200 ms, and raw clients speaking to it.
class ConformanceSuiteCase: XCTestCase {
    var server: ConformanceServerProcess?
    var port: Int { server?.port ?? 0 }
    static let pingInterval = 300
    static let pingTimeout = 200

    override func setUpWithError() throws {
        server = try ConformanceServerProcess()
    }

    override func tearDown() { server?.stop() }

    func get(_ path: String) -> RawHTTP.Response { RawHTTP.request(port: port, "GET", path) }
    func post(_ path: String, _ body: String) -> RawHTTP.Response {
        RawHTTP.request(port: port, "POST", path, body: Array(body.utf8))
    }
    func request(_ method: String, _ path: String) -> RawHTTP.Response { RawHTTP.request(port: port, method, path) }

    func webSocket(_ path: String) throws -> RawWebSocketClient { try RawWebSocketClient(port: port, target: path) }

    /// Opens a polling session at `mount` (`/engine.io/` or `/socket.io/`); its sid.
    func openPollingSession(_ mount: String) throws -> String {
        let r = get("\(mount)?EIO=4&transport=polling")
        XCTAssertEqual(r.status, 200)
        return try XCTUnwrap(try JSONValue.parse(String(r.text.dropFirst()))["sid"]?.stringValue)
    }

    /// Checks an open packet `0{...}` as both suites do: exactly sid, upgrades, pingInterval,
    /// pingTimeout, maxPayload, with the suites' values.
    func checkOpenPacket(_ text: String, upgrades: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(text.hasPrefix("0"), text, file: file, line: line)
        let v = try JSONValue.parse(String(text.dropFirst()))
        let keys = Set(v.objectValue?.pairs.map(\.key) ?? [])
        XCTAssertEqual(keys, ["sid", "upgrades", "pingInterval", "pingTimeout", "maxPayload"], file: file, line: line)
        XCTAssertNotNil(v["sid"]?.stringValue, file: file, line: line)
        XCTAssertEqual(v["upgrades"], .array(upgrades.map { .string($0) }), file: file, line: line)
        XCTAssertEqual(v["pingInterval"]?.intValue, Int64(Self.pingInterval), file: file, line: line)
        XCTAssertEqual(v["pingTimeout"]?.intValue, Int64(Self.pingTimeout), file: file, line: line)
        XCTAssertEqual(v["maxPayload"]?.intValue, 1_000_000, file: file, line: line)
    }

    /// The suites' "wait for close": the connection ends (close frame or EOF) in time.
    func assertCloses(_ ws: RawWebSocketClient, within seconds: Double = 3, file: StaticString = #filePath, line: UInt = #line) {
        while true {
            switch ws.receive(timeout: seconds) {
            case .close: return
            case .timeout: return XCTFail("the server did not close the connection", file: file, line: line)
            case .text, .binary: continue
            }
        }
    }
}

// The Engine.IO handshake cases, which both official suites run (the Socket.IO suite against
// /socket.io/, the Engine.IO suite against /engine.io/): one body each, called by the named tests.
extension ConformanceSuiteCase {
    func handshakePollingOpensASession(_ m: String) throws {
        let r = get("\(m)?EIO=4&transport=polling")
        XCTAssertEqual(r.status, 200)
        try checkOpenPacket(r.text, upgrades: ["websocket"])
    }

    func handshakePollingRefusesAnInvalidEIO(_ m: String) {
        XCTAssertEqual(get("\(m)?transport=polling").status, 400)
        XCTAssertEqual(get("\(m)?EIO=abc&transport=polling").status, 400)
    }

    func handshakePollingRefusesAnInvalidTransport(_ m: String) {
        XCTAssertEqual(get("\(m)?EIO=4").status, 400)
        XCTAssertEqual(get("\(m)?EIO=4&transport=abc").status, 400)
    }

    func handshakePollingRefusesAnInvalidMethod(_ m: String) {
        XCTAssertEqual(request("POST", "\(m)?EIO=4&transport=polling").status, 400)
        XCTAssertEqual(request("PUT", "\(m)?EIO=4&transport=polling").status, 400)
    }

    func handshakeWebSocketOpensASession(_ m: String) throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive() else { return XCTFail("no open packet") }
        try checkOpenPacket(open, upgrades: [])
    }

    func handshakeWebSocketRefusesAnInvalidEIO(_ m: String) throws {
        XCTAssertEqual(try webSocket("\(m)?transport=websocket").status, 400)
        XCTAssertEqual(try webSocket("\(m)?EIO=abc&transport=websocket").status, 400)
    }

    func handshakeWebSocketRefusesAnInvalidTransport(_ m: String) throws {
        XCTAssertEqual(try webSocket("\(m)?EIO=4").status, 400)
        XCTAssertEqual(try webSocket("\(m)?EIO=4&transport=abc").status, 400)
    }
}

// The heartbeat cases, which both official suites run: one body each (the checks themselves are
// `EngineHeartbeatCheck`'s, shared with the in-process Engine.IO tests).
extension ConformanceSuiteCase {
    func heartbeatPollingAnswersPings(_ m: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let sid = try openPollingSession(m)
        let rounds = EngineHeartbeatCheck.pollingPingPong(poll: { get("\(m)?EIO=4&transport=polling&sid=\(sid)") },
                                                          pong: { post("\(m)?EIO=4&transport=polling&sid=\(sid)", "3") })
        XCTAssertEqual(rounds, Array(repeating: EngineHeartbeatCheck.answeredRound, count: 3), file: file, line: line)
    }

    func heartbeatPollingClosesOnPingTimeout(_ m: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let sid = try openPollingSession(m)
        XCTAssertTrue(EngineHeartbeatCheck.pollingSessionCloses(pingInterval: Self.pingInterval, pingTimeout: Self.pingTimeout) {
            get("\(m)?EIO=4&transport=polling&sid=\(sid)")
        }, "a GET is refused once the unanswered ping timed out", file: file, line: line)
    }

    func heartbeatWebSocketAnswersPings(_ m: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        _ = ws.receive()
        XCTAssertEqual(EngineHeartbeatCheck.webSocketPingPong(ws), Array(repeating: .text("2"), count: 3), file: file, line: line)
    }

    func heartbeatWebSocketClosesOnPingTimeout(_ m: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        assertCloses(ws, file: file, line: line)  // the ping is never answered
    }
}
