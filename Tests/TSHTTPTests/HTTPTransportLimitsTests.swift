import XCTest
import Logging
import TSSockets
import TSTestSupport
@testable import TSHTTP

/// Keeps every log line (message text) of the loggers made with it.
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `lines` is a LockedValue; the other properties are set before use.
    let lines: LockedValue<[String]>
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    init(lines: LockedValue<[String]>) { self.lines = lines }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        lines.withLock { $0.append("\(level) \(message)") }
    }
}

/// Transport limits over real sockets: responses of any size reach a reading client while
/// one that stops reading is dropped (and the access log says so); a trickled body gets 408 on a
/// total deadline; one address cannot take every connection slot.
final class HTTPTransportLimitsTests: XCTestCase {
    var server: HTTPServer?
    var port = 0
    let logLines = LockedValue<[String]>([])
    static let bigSize = 8 * 1024 * 1024
    /// 8 MiB: 128 blocks of 64 KiB, each block numbered in its first byte (cheap to build in a
    /// debug build, and a misplaced block shows).
    static let big: [UInt8] = {
        var block = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var out: [UInt8] = []
        out.reserveCapacity(bigSize)
        for i in 0..<(bigSize / 65_536) {
            block[0] = UInt8(truncatingIfNeeded: i)
            out.append(contentsOf: block)
        }
        return out
    }()

    func startServer(_ configure: (inout HTTPServerConfiguration) -> Void) throws {
        var config = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: 2)
        config.timeoutCheckInterval = .milliseconds(20)
        configure(&config)
        var b = RouterBuilder()
        b.get("/hello") { _ in .text("hello") }
        b.get("/big") { _ in .bytes(Self.big, contentType: "application/octet-stream") }
        b.post("/echo") { req in .bytes(req.body, contentType: "application/octet-stream") }
        let lines = logLines
        let logger = Logger(label: "test.transport") { _ in RecordingLogHandler(lines: lines) }
        let s = HTTPServer(configuration: config, responder: b.freeze(), logger: logger)
        port = try s.start()
        server = s
    }

    override func tearDown() async throws {
        if let server { await server.shutdown() }
        server = nil
    }

    /// Waits up to `seconds` for `condition` (a state another thread changes).
    func waitFor(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        blockUntil(timeout: .milliseconds(Int(seconds * 1000)), condition)
    }

    func testResponseMuchLargerThanTheBoundReachesAReadingClientAndPipeliningWaitsForIt() throws {
        // Before: a response over maxOutboundBytesPerConnection was dropped without a byte sent.
        try startServer { $0.maxOutboundBytesPerConnection = 64 * 1024 }
        let c = try RawClient(port: port, receiveTimeoutSeconds: 10, receiveBuffer: 16 * 1024)
        // Three pipelined requests: each large answer streams at the client's pace, the next waits for it.
        try c.send(request("GET", "/big") + request("GET", "/big") + request("GET", "/hello"))
        for _ in 0..<2 {
            let r = try c.readResponse()
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.body.count, Self.bigSize)
            XCTAssertTrue(r.body == Self.big, "the body arrives intact")
        }
        XCTAssertEqual(try c.readResponse().bodyString, "hello")
        XCTAssertTrue(waitFor { self.logLines.current.filter { $0.contains("GET /big 200") }.count == 2 })
        XCTAssertFalse(logLines.current.contains { $0.contains("not delivered") }, "\(logLines.current)")
    }

    func testClientThatStopsReadingIsDroppedAndTheAccessLogSaysSo() throws {
        try startServer { c in
            c.maxOutboundBytesPerConnection = 64 * 1024
            c.outboundStallTimeout = .milliseconds(300)
        }
        let c = try RawClient(port: port, receiveTimeoutSeconds: 10, receiveBuffer: 4096)
        try c.send(request("GET", "/big"))
        // The client reads nothing: the kernel buffers fill, then no byte moves for 300 ms.
        XCTAssertTrue(waitFor(20) { self.server?.openConnections == 1 }, "the connection was accepted")
        XCTAssertTrue(waitFor(20) { self.server?.openConnections == 0 }, "the stalled connection is dropped")
        let lines = logLines.current
        XCTAssertTrue(lines.contains { $0.contains("GET /big 200") && $0.contains("not delivered (slow consumer)") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains("slow consumer") && $0.contains("took no byte") }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("GET /big 200") && !$0.contains("not delivered") }, "no line claims a delivered 200")
        let (closed, received) = c.drainUntilClose()
        XCTAssertTrue(closed)
        XCTAssertLessThan(received, Self.bigSize)
    }

    func testTrickledBodyGets408OnATotalDeadline() throws {
        // Before: a body trickled one byte at a time held its connection forever.
        try startServer { $0.bodyReadTimeout = .milliseconds(400) }
        let c = try RawClient(port: port)
        try c.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
        let start = Date()
        // One byte every 50 ms (on the raw descriptor, from a thread): each arrives well within
        // any per-byte timeout.
        let fd = c.fd
        let trickler = Thread {
            for _ in 0..<40 {
                let sent = [UInt8(0x78)].withUnsafeBytes { TestSockets.send(fd, $0) }
                if sent != 1 { return }
                TestPause.trickle(.milliseconds(50))  // the slow client this test is about
            }
        }
        trickler.start()
        let r = try c.readResponse()
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(r.status, 408)
        XCTAssertEqual(r.header("Connection"), "close")
        XCTAssertTrue(r.bodyString.contains("\"REQUEST_TIMEOUT\""), r.bodyString)
        XCTAssertTrue(c.waitForClose())
        XCTAssertGreaterThanOrEqual(elapsed, 0.35)
        XCTAssertLessThan(elapsed, 1.9, "answered at the 400 ms deadline, not extended by the trickle")
        XCTAssertTrue(logLines.current.contains { $0.contains("request body not received within 400 ms") })
    }

    func testPerAddressCapRefusesOneAddressWhileOthersAreServed() throws {
        try startServer { $0.maxConnectionsPerAddress = 2 }
        let a = try RawClient(port: port)
        let b = try RawClient(port: port)
        for c in [a, b] {
            try c.send(request("GET", "/hello"))
            XCTAssertEqual(try c.readResponse().status, 200)
        }
        // A third from 127.0.0.1: 503 and closed.
        let refused = try RawClient(port: port)
        let r = try refused.readResponse()
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Connection"), "close")
        XCTAssertTrue(refused.waitForClose())
        // Another address (the loopback range) is still served.
        guard let other = try? RawClient(port: port, sourceAddress: "127.0.0.2") else {
            throw XCTSkip("cannot bind 127.0.0.2 on this machine (no loopback range)")
        }
        try other.send(request("GET", "/hello"))
        XCTAssertEqual(try other.readResponse().status, 200)
        XCTAssertEqual(server?.openConnections, 3)
        let refusal = "TCP connections refused: 2 open from that address (server.maxConnectionsPerAddress): answered 503 and closed (from 127.0.0.1)"
        XCTAssertTrue(logLines.current.contains { $0.contains(refusal) }, "\(logLines.current)")
        // A flood of refusals within the interval adds no line (their count comes in one line at its end).
        for _ in 0..<30 {
            let more = try RawClient(port: port)
            XCTAssertEqual(try more.readResponse().status, 503)
        }
        XCTAssertEqual(logLines.current.filter { $0.contains("TCP connections refused") }.count, 1, "\(logLines.current)")
        // When one of 127.0.0.1's connections closes, its slot is free again.
        try a.send(request("GET", "/hello", headers: ["Connection: close"]))
        XCTAssertEqual(try a.readResponse().status, 200)
        XCTAssertTrue(a.waitForClose())
        XCTAssertTrue(waitFor { self.server?.openConnections == 2 })
        let again = try RawClient(port: port)
        try again.send(request("GET", "/hello"))
        XCTAssertEqual(try again.readResponse().status, 200)
    }

    func testShutdownClosesIdleKeepAliveConnectionsAtOnce() async throws {
        try startServer { $0.shutdownGracePeriod = .seconds(10) }
        var clients: [RawClient] = []
        for _ in 0..<3 {
            let c = try RawClient(port: port)
            try c.send(request("GET", "/hello"))
            XCTAssertEqual(try c.readResponse().status, 200)
            clients.append(c)
        }
        let start = Date()
        await server?.shutdown()
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "idle keep-alive connections do not hold the shutdown for the grace period")
        for c in clients { XCTAssertTrue(c.waitForClose()) }
        server = nil
    }
}
