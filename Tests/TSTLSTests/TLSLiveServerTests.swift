#if canImport(CTLS)
import CTLS
import Foundation
import Logging
import TSHTTP
import TSSockets
import TSTestSupport
import TSTLS
import XCTest

/// Records log messages (to assert the lines that explain a close).
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under its LockedValue.
    let lines = LockedValue<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level) \(event.message)") }
    }
    func contains(_ text: String) -> Bool { lines.current.contains { $0.contains(text) } }
}

/// HTTPS over real sockets: the HTTPServer with the TLS transform on port 0.
final class TLSLiveServerTests: XCTestCase {
    var certs: TestCertificates!
    var server: HTTPServer!
    var port = 0
    var gate: TLSHandshakeGate!
    let logs = RecordingLogHandler()

    func startServer(handshakeTimeout: UInt64 = 5_000_000_000, maxHandshakes: Int = 64, refusalInterval: UInt64? = nil,
                     configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        certs = try TestCertificates()
        let pair = try certs.makeServerPair(name: "server")
        let logger = Logger(label: "tls-test") { _ in self.logs }
        let store = try TLSContextStore(certificateFile: pair.cert, privateKeyFile: pair.key, logger: logger)
        gate = TLSHandshakeGate(maxConcurrent: maxHandshakes)
        var config = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: 1)
        let refusals = refusalInterval.map { RefusalLog(subject: "TLS connections", logger: logger, interval: $0) }
        config.connectionTransform = TLSConnectionTransform.factory(store: store, gate: gate, handshakeTimeout: handshakeTimeout,
                                                                    refusals: refusals)
        configure(&config)
        var b = RouterBuilder()
        b.get("/health") { _ in .json(["status": "ok"]) }
        b.post("/echo") { req in .bytes(req.body, contentType: "application/octet-stream") }
        server = HTTPServer(configuration: config, responder: b.freeze(), logger: logger)
        port = try server.start()
    }

    override func tearDown() async throws {
        if let server { await server.shutdown() }
        server = nil
    }

    func testHTTPSRequestsWithKeepAlive() throws {
        try startServer()
        let client = try LiveTLSClient(port: port, caFile: certs.caFile)
        XCTAssertTrue(client.handshake(), "\(client.events)")
        client.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let r = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(r.status, 200)
        XCTAssertTrue(r.text.contains("ok"), r.text)
        // A large body through the same connection (many TLS records each way).
        let body = String(repeating: "x", count: 200_000)
        let before = client.plaintext.count
        client.send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        let second = client.readResponse(from: before)
        XCTAssertEqual(second?.status, 200)
        XCTAssertEqual(second?.body.count, body.utf8.count)
        XCTAssertEqual(gate.current, 0, "the handshake slot is released once the handshake is done")
    }

    func testTrickledClientHelloIsCutOffAtTheHandshakeDeadline() throws {
        try startServer(handshakeTimeout: 500_000_000)
        let cctx = makeClientContext(caFile: certs.caFile)
        defer { SSL_CTX_free(cctx) }
        let engine = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        var hello: [UInt8] = []
        for case .send(let b) in engine.start() { hello += b }
        XCTAssertGreaterThan(hello.count, 100)
        let tcp = try RawTCPClient(port: port, timeoutSeconds: 5)
        tcp.setReceiveTimeout(0.1)
        // One byte every 100 ms: the whole hello would take > 10 s; the deadline is total.
        var closedAfter = -1
        for (i, byte) in hello.enumerated() {
            if !tcp.write([byte]) { closedAfter = i; break }
            if case .closed = tcp.read() { closedAfter = i; break }
            if i > 60 { break }
        }
        XCTAssertGreaterThan(closedAfter, 0, "the server must close a trickled handshake")
        XCTAssertLessThan(closedAfter, 40, "closed near the 0.5 s deadline, not after the whole hello")
        XCTAssertTrue(logs.contains("TLS handshake not finished within 500 ms"), "\(logs.lines.current)")
    }

    func testPlainHTTPToTheTLSPortIsClosedWithALogLine() throws {
        try startServer()
        let tcp = try RawTCPClient(port: port, timeoutSeconds: 5)
        tcp.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let reply = String(decoding: tcp.readUntilClose(), as: UTF8.self)
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 400"), reply)
        XCTAssertTrue(reply.contains("https://"), reply)
        XCTAssertTrue(logs.contains("plain HTTP request (GET) sent to the TLS port"), "\(logs.lines.current)")
    }

    /// A flood of refused TLS connections (plain HTTP to the TLS port, each answered 400 and
    /// closed) writes one line when it starts and one summary per interval with the count and the
    /// number of addresses, not a line per connection.
    func testRefusedConnectionsAreLoggedAtABoundedRateWithTheirCount() throws {
        let interval: UInt64 = 1_000_000_000
        try startServer(refusalInterval: interval)
        let started = ContinuousClock.now
        let flood = 200
        for _ in 0..<flood {
            let tcp = try RawTCPClient(port: port, timeoutSeconds: 5)
            tcp.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            XCTAssertTrue(String(decoding: tcp.readUntilClose(), as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        }
        let elapsed = ContinuousClock.now - started
        func refusalLines() -> [String] { logs.lines.current.filter { $0.contains("TLS connections refused") } }
        func counted() -> Int {
            refusalLines().reduce(0) { total, line in
                guard let r = line.range(of: #"refused: (\d+) more"#, options: .regularExpression) else { return total + 1 }
                return total + (Int(line[r].split(separator: " ")[1]) ?? 0)
            }
        }
        XCTAssertTrue(blockUntil(timeout: .seconds(10)) { counted() == flood }, "every refusal is counted: \(refusalLines())")
        let allowed = 2 + Int(elapsed / .nanoseconds(Int64(interval)))
        XCTAssertLessThanOrEqual(refusalLines().count, allowed, "\(flood) refusals in \(elapsed): \(refusalLines())")
        XCTAssertTrue(refusalLines().first?.contains("plain HTTP request (GET) sent to the TLS port") == true, "\(refusalLines())")
        XCTAssertTrue(refusalLines().last?.contains("from 1 address (") == true, "the summary names how many addresses: \(refusalLines())")
    }

    func testHandshakesBeyondTheBoundAreRefused() throws {
        try startServer(maxHandshakes: 1)
        let holder = try RawTCPClient(port: port, timeoutSeconds: 5)  // starts a handshake, sends nothing
        holder.write([0x16, 0x03, 0x01])
        // Wait until the server counts it.
        let gate: TLSHandshakeGate = self.gate
        blockUntil { gate.current >= 1 }
        XCTAssertEqual(gate.current, 1)
        // The server-wide bound counts handshakes under way: the next one is refused at its first byte.
        let refused = try RawTCPClient(port: port, timeoutSeconds: 5)
        refused.write([0x16, 0x03, 0x01])
        XCTAssertTrue(refused.readEOF(), "a handshake past tls.maxConcurrentHandshakes is closed at once")
        XCTAssertTrue(logs.contains("handshakes already in progress"), "\(logs.lines.current)")
        _ = holder
    }

    /// The connection caps count TLS connections like any other (the listener
    /// admits first, then attaches the transform); a refused one is closed without the plain 503.
    func testPerAddressCapCountsTLSConnections() throws {
        try assertCapCountsTLSConnections { $0.maxConnectionsPerAddress = 2 }
    }

    func testTotalConnectionCapCountsTLSConnections() throws {
        try assertCapCountsTLSConnections { $0.maxConnections = 2; $0.maxConnectionsPerAddress = 0 }
    }

    private func assertCapCountsTLSConnections(_ configure: (inout HTTPServerConfiguration) -> Void,
                                               file: StaticString = #filePath, line: UInt = #line) throws {
        try startServer(configure: configure)
        let first = try LiveTLSClient(port: port, caFile: certs.caFile)
        XCTAssertTrue(first.handshake(), "\(first.events)", file: file, line: line)
        let second = try LiveTLSClient(port: port, caFile: certs.caFile)
        XCTAssertTrue(second.handshake(), "\(second.events)", file: file, line: line)
        // The third is over the cap: closed at once, no bytes (a 503 would be garbage to TLS).
        let third = try RawTCPClient(port: port, timeoutSeconds: 5)
        var received: [UInt8] = []
        var closed = false
        reading: while true {
            switch third.read() {
            case .bytes(let b): received += b
            case .closed: closed = true; break reading
            case .timedOut, .failed: break reading
            }
        }
        XCTAssertTrue(closed, "a connection over the cap is closed at once", file: file, line: line)
        XCTAssertEqual(received, [], "no plain 503 on the TLS port", file: file, line: line)
        // The two admitted ones still work.
        second.send("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(second.readResponse()?.status, 200, file: file, line: line)
        // Once one closes, its slot is free for a new TLS connection.
        let port = self.port, caFile = certs.caFile
        XCTAssertTrue(try blockUntil { try LiveTLSClient(port: port, caFile: caFile).handshake() },
                      "a TLS connection closing must release its slot", file: file, line: line)
        _ = first
    }
}
#endif
