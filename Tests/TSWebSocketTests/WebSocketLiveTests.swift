import Foundation
import Logging
import TSHTTP
import TSSockets
import TSTestSupport
import XCTest
@testable import TSWebSocket

/// End-to-end over real sockets: an `HTTPServer` on port 0 serving the echo handler (and a test
/// handler), driven by a raw blocking client.
final class WebSocketLiveTests: XCTestCase {
    private var server: HTTPServer!
    private var group: EventLoopGroup?
    private var port = 0
    private let clock = ManualClock()
    private let upgraded = LockedBox<WebSocketConnection?>(nil)
    private let closes = LockedBox<[(UInt16?, String)]>([])

    override func setUp() async throws {
        let group = try EventLoopGroup(count: 1, clock: clock)
        self.group = group
        var router = RouterBuilder()
        router.get("/echo", WebSocketEcho.handler(configuration: WebSocketConfiguration(maxFrameSize: 200_000, maxMessageSize: 300_000)))
        router.get("/restricted", WebSocketEcho.handler(configuration: WebSocketConfiguration(allowedOrigins: ["https://ok.example"])))
        let upgraded = self.upgraded, closes = self.closes
        router.get("/test") { request in
            WebSocketHandshake.response(for: request, configuration: WebSocketConfiguration(closeTimeout: .seconds(5))) { ws in
                upgraded.set(ws)
                ws.delegate = TestDelegate(closes: closes)
            }
        }
        router.get("/trickle") { request in
            var c = WebSocketConfiguration()
            c.frameReadTimeout = .seconds(10)
            return WebSocketHandshake.response(for: request, configuration: c) { ws in
                upgraded.set(ws)
                ws.delegate = TestDelegate(closes: closes)
            }
        }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.eventLoops = 1
        // Small, so the slow-consumer test trips it quickly (every other test stays far below).
        config.maxOutboundBytesPerConnection = 512 * 1024
        server = HTTPServer(configuration: config, responder: router.freeze(), logger: Logger(label: "test"), group: group)
        port = try server.start()
    }

    override func tearDown() async throws {
        await server.shutdown()
        group?.shutdown()
    }

    // MARK: Handshake over HTTP

    func testHandshakeAcceptAndEcho() throws {
        let client = try RawWebSocketClient(port: port)
        let head = try client.handshake()
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 101"), head)
        XCTAssertTrue(head.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), head)
        XCTAssertTrue(head.lowercased().contains("upgrade: websocket"), head)

        client.sendFrame(.text, Array("héllo".utf8))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .text, payload: Array("héllo".utf8)))
        client.sendFrame(.binary, [0, 1, 2, 255])
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .binary, payload: [0, 1, 2, 255]))
        // Fragmented, with a ping in between: pong first, then the reassembled message as one frame.
        client.sendFrame(.text, Array("frag".utf8), fin: false)
        client.sendFrame(.ping, [9, 8])
        client.sendFrame(.continuation, Array("mented".utf8))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .pong, payload: [9, 8]))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .text, payload: Array("fragmented".utf8)))
        // 16- and 64-bit lengths.
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        client.sendFrame(.binary, big)
        XCTAssertEqual(try client.readFrame()?.payload, big)
    }

    func testFramesInSameSegmentAsHandshakeAreProcessed() throws {
        let client = try RawWebSocketClient(port: port)
        client.write(Array(("GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
                     + clientFrame(.text, "early"))
        XCTAssertTrue(try client.readHead().hasPrefix("HTTP/1.1 101"))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .text, payload: Array("early".utf8)))
    }

    func testHandshakeRejections() throws {
        let v8 = try RawWebSocketClient(port: port)
        v8.write("GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
        let h426 = try v8.readHead()
        XCTAssertTrue(h426.hasPrefix("HTTP/1.1 426"), h426)
        XCTAssertTrue(h426.lowercased().contains("sec-websocket-version: 13"), h426)

        let badKey = try RawWebSocketClient(port: port)
        XCTAssertTrue(try badKey.handshake(key: "c2hvcnQ=").hasPrefix("HTTP/1.1 400"))

        let plain = try RawWebSocketClient(port: port)
        plain.write("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(try plain.readHead().hasPrefix("HTTP/1.1 400"))

        let origin = try RawWebSocketClient(port: port)
        XCTAssertTrue(try origin.handshake(path: "/restricted", extraHeaders: "Origin: https://evil.example\r\n").hasPrefix("HTTP/1.1 403"))
        let okOrigin = try RawWebSocketClient(port: port)
        XCTAssertTrue(try okOrigin.handshake(path: "/restricted", extraHeaders: "Origin: https://ok.example\r\n").hasPrefix("HTTP/1.1 101"))
    }

    // MARK: Control frames and closing

    func testPingPong() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake()
        client.sendFrame(.ping, Array("are you there".utf8))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .pong, payload: Array("are you there".utf8)))
    }

    func testClientInitiatedCloseHandshake() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        client.sendFrame(.close, closePayload(1001, Array("leaving".utf8)))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .close, payload: closePayload(1001)))
        XCTAssertTrue(client.readEOF(), "server closes TCP after the close handshake")
        try waitFor { self.closes.get().count == 1 }
        XCTAssertEqual(closes.get().first?.0, 1001)
        XCTAssertEqual(closes.get().first?.1, "leaving")
    }

    func testProtocolErrorSends1002ThenClosesTCP() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        client.sendFrame(.text, Array("unmasked".utf8), masked: false)
        let frame = try XCTUnwrap(client.readFrame())
        XCTAssertEqual(frame.opcode, .close)
        XCTAssertEqual(Array(frame.payload.prefix(2)), [0x03, 0xEA])  // 1002
        XCTAssertTrue(client.readEOF())
        try waitFor { self.closes.get().count == 1 }
        XCTAssertEqual(closes.get().first?.0, 1002)
    }

    func testInvalidUTF8Sends1007AndOversizedFrameSends1009() throws {
        let a = try RawWebSocketClient(port: port)
        _ = try a.handshake()
        a.sendFrame(.text, [0x61, 0xFF])
        XCTAssertEqual(try a.readFrame()?.payload.prefix(2).map { $0 }, [0x03, 0xEF])  // 1007
        XCTAssertTrue(a.readEOF())

        let b = try RawWebSocketClient(port: port)
        _ = try b.handshake()
        b.write([0x82, 0xFF, 0, 0, 0, 0, 0x10, 0, 0, 0])  // header only: 256 MiB masked binary
        XCTAssertEqual(try b.readFrame()?.payload.prefix(2).map { $0 }, [0x03, 0xF1])  // 1009
        XCTAssertTrue(b.readEOF())
    }

    func testServerInitiatedCloseTimesOutOnTheLoopClock() throws {
        let client = try RawWebSocketClient(port: port, timeoutSeconds: 1)
        _ = try client.handshake(path: "/test")
        client.sendFrame(.text, Array("close-me".utf8))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .close, payload: closePayload(1000, Array("bye".utf8))))
        // Messages sent after our Close are dropped.
        let ws = try XCTUnwrap(upgraded.get())
        ws.send(text: "too late")
        // The peer never answers: still open until closeTimeout passes on the loop's clock.
        XCTAssertEqual(client.read(maxBytes: 1024), .timedOut, "nothing more arrives, but no EOF either (1 s receive timeout)")
        clock.advance(by: 5_000_000_001)
        ws.loop.execute {}  // wake the loop so it sees the new time
        XCTAssertTrue(client.readEOF())
        try waitFor { self.closes.get().count == 1 }
        XCTAssertEqual(closes.get().first?.0, 1000)
    }

    /// A frame trickled byte by byte is failed with 1008 once it has taken
    /// `frameReadTimeout` from its first byte; its later bytes do not extend the deadline.
    func testTrickledFrameIsClosedWith1008OnATotalDeadline() throws {
        let client = try RawWebSocketClient(port: port, timeoutSeconds: 1)
        _ = try client.handshake(path: "/trickle")
        try waitFor { self.upgraded.get() != nil }
        let ws = try XCTUnwrap(upgraded.get())
        // A complete frame first: echo-free handler, but it must not start any deadline.
        client.sendFrame(.text, Array("hello".utf8))
        let frame = clientFrame(.text, String(repeating: "a", count: 100))
        client.write(Array(frame[0..<10]))
        // The bytes reached the server's socket and the loop has read them: the frame's deadline
        // starts at the clock's current time.
        TestSockets.waitUntilDelivered(client.fd)
        ws.loop.waitForTurns()
        clock.advance(by: 6_000_000_000)
        ws.loop.execute {}
        client.write(Array(frame[10..<20]))
        TestSockets.waitUntilDelivered(client.fd)
        ws.loop.waitForTurns()
        clock.advance(by: 3_000_000_000)
        ws.loop.execute {}
        XCTAssertEqual(client.read(maxBytes: 1024), .timedOut, "9 s into the frame: still open")
        client.write(Array(frame[20..<30]))
        TestSockets.waitUntilDelivered(client.fd)
        ws.loop.waitForTurns()
        clock.advance(by: 1_000_000_001)
        ws.loop.execute {}
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .close, payload: closePayload(1008, Array("frame read timeout".utf8))))
        XCTAssertTrue(client.readEOF())
        try waitFor { self.closes.get().count == 1 }
    }

    func testServerInitiatedCloseCompletedByPeer() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        client.sendFrame(.text, Array("close-me".utf8))
        XCTAssertEqual(try client.readFrame()?.opcode, .close)
        client.sendFrame(.close, closePayload(1000))
        XCTAssertTrue(client.readEOF())
    }

    func testSendFromOtherThreadAndBroadcastBytes() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        client.sendFrame(.text, Array("hello".utf8))  // the delegate doesn't echo; just ensures upgrade done
        try waitFor { self.upgraded.get() != nil }
        let ws = try XCTUnwrap(upgraded.get())
        let shared = WebSocketFrameEncoder.encodeMessage(.text("broadcast"))
        DispatchQueue.global().async {
            ws.sendFrameBytes(shared)
            ws.send(binary: [7])
        }
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .text, payload: Array("broadcast".utf8)))
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .binary, payload: [7]))
    }

    func testTCPDropReportsCloseWithoutCode() throws {
        var client: RawWebSocketClient? = try RawWebSocketClient(port: port)
        _ = try client!.handshake(path: "/test")
        try waitFor { self.upgraded.get() != nil }
        client = nil  // closes the socket without a Close frame
        try waitFor { self.closes.get().count == 1 }
        XCTAssertNil(closes.get().first?.0)
    }

    func testSlowConsumerIsDisconnectedAndReported() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        try waitFor { self.upgraded.get() != nil }
        let ws = try XCTUnwrap(upgraded.get())
        // The client never reads: kernel buffers fill, then the outbound buffer passes 512 KiB.
        let chunk = WebSocketFrameEncoder.encodeBinary([UInt8](repeating: 1, count: 256 * 1024))
        for _ in 0..<400 where closes.get().isEmpty {
            ws.sendFrameBytes(chunk)
            ws.loop.waitForTurns(1)  // that chunk was queued (and the bound checked) before the next
        }
        try waitFor { self.closes.get().count == 1 }
        XCTAssertNil(closes.get().first?.0)
        XCTAssertEqual(closes.get().first?.1, "slow consumer")
        let reason = LockedBox<CloseReason?>(nil)
        ws.loop.execute { reason.set(ws.transportCloseReason) }
        try waitFor { reason.get() != nil }
        XCTAssertEqual(reason.get(), .slowConsumer)
    }

    func testServerPing() throws {
        let client = try RawWebSocketClient(port: port)
        _ = try client.handshake(path: "/test")
        try waitFor { self.upgraded.get() != nil }
        try XCTUnwrap(upgraded.get()).sendPing([1, 2, 3])
        XCTAssertEqual(try client.readFrame(), WebSocketFrame(opcode: .ping, payload: [1, 2, 3]))
    }

    private func waitFor(_ condition: @escaping () -> Bool, timeout: Double = 5) throws {
        if !blockUntil(timeout: .milliseconds(Int(timeout * 1000)), condition) { XCTFail("timed out") }
    }
}

/// Records closes; closes the connection when told "close-me".
final class TestDelegate: WebSocketDelegate {
    let closes: LockedBox<[(UInt16?, String)]>
    init(closes: LockedBox<[(UInt16?, String)]>) { self.closes = closes }

    func webSocket(_ ws: WebSocketConnection, didReceive message: WebSocketMessage) {
        if message == .text("close-me") { ws.close(code: 1000, reason: "bye") }
    }

    func webSocketDidClose(_ ws: WebSocketConnection, code: UInt16?, reason: String) {
        closes.mutate { $0.append((code, reason)) }
    }
}

/// A value shared between the test thread and the loop thread.
// @unchecked Sendable: `value` is only accessed while holding `lock`.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
    func mutate(_ f: (inout T) -> Void) { lock.lock(); f(&value); lock.unlock() }
}
