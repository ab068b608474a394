import Foundation
import TSEngineIO
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSSocketIO

/// Engine.IO sessions that have not sent a Socket.IO CONNECT, over real sockets: capped per
/// address and in total with the reference's handshake refusal (`{"code":4,…}`), freed by a
/// CONNECT, closed at `connectTimeout`.
final class UnconnectedSessionsLiveTests: XCTestCase {
    var live: SocketIOLiveServer?

    override func tearDown() { live?.stop() }

    func start(perAddress: Int, total: Int, connectTimeout: Duration = .seconds(30)) throws -> SocketIOLiveServer {
        var options = SocketIOLiveServer.Options()
        options.engine.maxUnconnectedSessionsPerAddress = perAddress
        options.engine.maxUnconnectedSessions = total
        options.configure = { $0.connectTimeout = connectTimeout }
        let server = try SocketIOLiveServer(options)
        live = server
        return server
    }

    /// A polling handshake: the session id, or the refusal.
    func handshake(_ port: Int, from source: String? = nil) -> (sid: String?, response: RawHTTP.Response) {
        let r = RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling", sourceAddress: source)
        guard r.status == 200, r.text.hasPrefix("0"), let open = try? JSONValue.parse(String(r.text.dropFirst())) else { return (nil, r) }
        return (open["sid"]?.stringValue, r)
    }

    func assertReferenceRefusal(_ r: RawHTTP.Response, status: Int, saying text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(r.status, status, r.text, file: file, line: line)
        XCTAssertEqual(r.headers["content-type"], "application/json", file: file, line: line)
        let body = try JSONValue.parse(r.text)
        XCTAssertEqual(body["code"], 4, "engine.io's FORBIDDEN code, as allowRequest refusals carry it", file: file, line: line)
        XCTAssertTrue(body["message"]?.stringValue?.contains(text) == true, r.text, file: file, line: line)
    }

    func testAHandshakeFloodFromOneAddressIsCappedWithTheReferenceRefusalWhileOthersAreServed() throws {
        let server = try start(perAddress: 20, total: 1_000)
        var sids: [String] = []
        for _ in 0..<20 {
            let (sid, r) = handshake(server.port)
            guard let sid else { return XCTFail("handshake refused under the cap: \(r.status) \(r.text)") }
            sids.append(sid)
        }
        for _ in 0..<30 {
            try assertReferenceRefusal(handshake(server.port).response, status: 403, saying: "from this address")
        }
        // Over WebSocket too, before the 101.
        let ws = try RawWebSocketClient(port: server.port, target: "/socket.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 403)
        var stats = server.io.stats
        XCTAssertEqual(stats.unconnectedSessions, 20, "the flood holds the cap, not one session per handshake")
        XCTAssertEqual(stats.handshakesRefusedPerAddress, 31)
        XCTAssertEqual(server.io.engine.sessionCount, 20)

        // A session that sends its CONNECT leaves the count: its slot is free for the next handshake.
        let post = RawHTTP.request(port: server.port, "POST", "/socket.io/?EIO=4&transport=polling&sid=\(sids[0])", body: Array("40".utf8))
        XCTAssertEqual(post.status, 200, post.text)
        XCTAssertTrue(blockUntil(timeout: .seconds(5)) { server.io.stats.unconnectedSessions == 19 }, "\(server.io.stats)")
        XCTAssertNotNil(handshake(server.port).sid, "a slot was freed by the CONNECT")
        stats = server.io.stats
        XCTAssertEqual(stats.sockets, 1)

        // Another address is served while this one is at its cap (Linux routes all of 127/8 to lo).
        let other = handshake(server.port, from: "127.0.0.2")
        if other.response.status == 0 {
            throw XCTSkip("127.0.0.2 is not a local address here; the per-address part above ran")
        }
        XCTAssertNotNil(other.sid, "\(other.response.status) \(other.response.text)")
        XCTAssertEqual(server.io.engine.unconnectedSessions(address: "127.0.0.2"), 1)
    }

    func testTheTotalBoundRefusesWith503AndRetryAfter() throws {
        let server = try start(perAddress: 0, total: 5)
        for _ in 0..<5 { XCTAssertNotNil(handshake(server.port).sid) }
        let refused = handshake(server.port).response
        try assertReferenceRefusal(refused, status: 503, saying: "on this server")
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(server.io.stats.unconnectedSessions, 5)
        XCTAssertEqual(server.io.stats.handshakesRefusedTotal, 1)
    }

    func testSessionsWithoutAConnectExpireAtTheConnectTimeout() throws {
        let server = try start(perAddress: 3, total: 100, connectTimeout: .milliseconds(300))
        var sids: [String] = []
        for _ in 0..<3 { if let sid = handshake(server.port).sid { sids.append(sid) } }
        XCTAssertEqual(sids.count, 3)
        XCTAssertEqual(handshake(server.port).response.status, 403, "at the cap")
        XCTAssertTrue(blockUntil(timeout: .seconds(10)) { server.io.stats.unconnectedSessions == 0 }, "\(server.io.stats)")
        XCTAssertEqual(server.io.stats.connectTimeouts, 3)
        XCTAssertEqual(server.io.engine.sessionCount, 0, "the sessions are gone, not only uncounted")
        XCTAssertNotNil(handshake(server.port).sid, "the address is served again")
    }
}
