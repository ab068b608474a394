import XCTest
import Logging
import TSJSON
import TSSockets
import TSTestSupport
@testable import TSHTTP

/// Records observer callbacks.
final class RecordingObserver: HTTPServerObserver {
    let finished = LockedValue<[(String, String?, Int)]>([])
    let opened = LockedValue(0)
    let closed = LockedValue(0)
    func requestFinished(method: HTTPMethod, routePattern: String?, status: Int, durationNanoseconds: UInt64) {
        finished.withLock { $0.append((method.rawValue, routePattern, status)) }
    }
    func connectionOpened() { opened.withLock { $0 += 1 } }
    func connectionClosed() { closed.withLock { $0 += 1 } }
}

final class HTTPServerTests: XCTestCase {
    var server: HTTPServer!
    var port = 0
    let observer = RecordingObserver()
    /// How many `/slow` requests reached their handler.
    let slowStarted = LockedValue(0)
    /// Whether `/ping`'s immediate handler answers (else its async handler does).
    let pingImmediate = LockedValue(true)

    func makeRouter() -> Router {
        var b = RouterBuilder()
        b.get("/hello") { _ in .json(["hello": "world"]) }
        b.post("/echo") { req in
            var r = HTTPResponse.bytes(req.body, contentType: "application/octet-stream")
            r.logUserID = "u1"
            return r
        }
        b.get("/rooms/:id") { req in .text(req.parameters["id"] ?? "") }
        let slowStarted = slowStarted
        b.get("/slow") { _ in
            slowStarted.withLock { $0 += 1 }
            // A handler that takes a while: the request in flight (during a shutdown, ahead of
            // pipelined requests) is what the tests using it are about.
            await TestPause.work(.milliseconds(300))
            return .text("slow done")
        }
        b.get("/boom") { _ in struct Secret: Error {}; throw Secret() }
        let pingImmediate = pingImmediate
        b.get("/ping", immediate: { _ in pingImmediate.withLock { $0 } ? .text("immediate") : nil }) { _ in .text("async") }
        return b.freeze()
    }

    func startServer(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var config = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: 2)
        config.maxRequestLineBytes = 1024
        config.maxHeaderBytes = 2048
        config.maxHeaderCount = 20
        config.maxBodyBytes = 64 * 1024
        configure(&config)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        server = HTTPServer(configuration: config, responder: makeRouter(), logger: logger, observer: observer)
        port = try server.start()
        XCTAssertGreaterThan(port, 0)
    }

    override func tearDown() async throws {
        if let server { await server.shutdown() }
        server = nil
    }

    func testKeepAliveAndHeaders() throws {
        try startServer()
        let c = try RawClient(port: port)
        for _ in 0..<3 {
            try c.send(request("GET", "/hello"))
            let r = try c.readResponse()
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.bodyString, #"{"hello":"world"}"#)
            XCTAssertEqual(r.header("Content-Length"), "17")
            XCTAssertEqual(r.header("Content-Type"), "application/json; charset=utf-8")
            XCTAssertNotNil(r.header("Date"))
            XCTAssertEqual(r.header("X-Request-Id")?.count, 16)
            XCTAssertNil(r.header("Connection"))
        }
        try c.send(request("GET", "/rooms/42", headers: ["X-Request-Id: my-req.1"]))
        let echoed = try c.readResponse()
        XCTAssertEqual(echoed.bodyString, "42")
        XCTAssertEqual(echoed.header("X-Request-Id"), "my-req.1")
        try c.send(request("GET", "/hello", headers: ["X-Request-Id: bad id with spaces"]))
        XCTAssertEqual(try c.readResponse().header("X-Request-Id")?.count, 16)
        try c.send(request("GET", "/hello", headers: ["Connection: close"]))
        let last = try c.readResponse()
        XCTAssertEqual(last.header("Connection"), "close")
        XCTAssertTrue(c.waitForClose())
    }

    func testHTTP10ClosesByDefault() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send("GET /hello HTTP/1.0\r\n\r\n")
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Connection"), "close")
        XCTAssertTrue(c.waitForClose())
    }

    func testPipelinedResponsesInOrder() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send(request("GET", "/slow") + request("GET", "/rooms/a") + request("POST", "/echo", body: "xyz") + request("GET", "/rooms/b"))
        XCTAssertEqual(try c.readResponse().bodyString, "slow done")
        XCTAssertEqual(try c.readResponse().bodyString, "a")
        XCTAssertEqual(try c.readResponse().bodyString, "xyz")
        XCTAssertEqual(try c.readResponse().bodyString, "b")
    }

    /// Handlers that never suspend finish inline, while the connection is still working through
    /// the bytes of one read: a thousand of them pipelined in one write are answered in order,
    /// each once, without the handler nesting one call per request.
    func testLongPipelineOfInlineHandlersIsAnsweredInOrder() throws {
        try startServer()
        let c = try RawClient(port: port)
        let count = 1000
        try c.send((0..<count).map { request("GET", "/rooms/r\($0)") }.joined())
        for i in 0..<count {
            XCTAssertEqual(try c.readResponse().bodyString, "r\(i)")
        }
        try c.send(request("GET", "/slow"))
        XCTAssertEqual(try c.readResponse().bodyString, "slow done", "a handler that suspends still answers on the same connection")
    }

    /// A route answered without a task (`respondImmediately`) keeps its place among pipelined
    /// requests that suspend or finish inline, is reported to the observer under its pattern, and
    /// answers HEAD without a body.
    func testImmediateAnswersKeepTheirPlaceInThePipeline() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send(request("GET", "/slow") + request("GET", "/ping") + request("GET", "/rooms/a") + request("HEAD", "/ping")
                   + request("POST", "/echo", body: "xyz") + request("GET", "/ping"))
        XCTAssertEqual(try c.readResponse().bodyString, "slow done")
        XCTAssertEqual(try c.readResponse().bodyString, "immediate")
        XCTAssertEqual(try c.readResponse().bodyString, "a")
        let head = try c.readResponse(headRequest: true)
        XCTAssertEqual(head.header("Content-Length"), "9")
        XCTAssertEqual(head.bodyString, "")
        XCTAssertEqual(try c.readResponse().bodyString, "xyz")
        XCTAssertEqual(try c.readResponse().bodyString, "immediate")
        let pings = observer.finished.withLock { $0.filter { $0.1 == "/ping" } }
        XCTAssertEqual(pings.map(\.0), ["GET", "HEAD", "GET"])
        XCTAssertEqual(pings.map(\.2), [200, 200, 200])
    }

    /// When the immediate handler has no answer, the route's async handler gives it; with handlers
    /// off the loop (`handlersOnEventLoop = false`) every request takes the async path.
    func testImmediateRouteFallsBackToItsHandler() async throws {
        try startServer()
        var c = try RawClient(port: port)
        pingImmediate.withLock { $0 = false }
        try c.send(request("GET", "/ping"))
        XCTAssertEqual(try c.readResponse().bodyString, "async")
        await server.shutdown()
        pingImmediate.withLock { $0 = true }
        try startServer { $0.handlersOnEventLoop = false }
        c = try RawClient(port: port)
        try c.send(request("GET", "/ping"))
        XCTAssertEqual(try c.readResponse().bodyString, "async")
    }

    func testHeadHasContentLengthButNoBody() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send(request("HEAD", "/hello") + request("GET", "/rooms/z"))
        let head = try c.readResponse(headRequest: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), "17")
        XCTAssertEqual(try c.readResponse().bodyString, "z", "no stray body bytes after HEAD")
    }

    func testExpectContinueAndChunkedBody() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try c.readResponse(headRequest: true)
        XCTAssertEqual(interim.status, 100)
        try c.send("hello")
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.bodyString, "hello")
        try c.send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n\r\n")
        XCTAssertEqual(try c.readResponse().bodyString, "abcdefg")
    }

    func testLimitStatuses() throws {
        try startServer()
        let cases: [(String, Int)] = [
            ("GET /" + String(repeating: "a", count: 2000) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "b", count: 3000) + "\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\nHost: h\r\n" + (0..<25).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
            ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "c", count: 1000), 413),
            ("GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET / HTTP/1.1\nHost: h\n\n", 400),
        ]
        for (raw, status) in cases {
            let c = try RawClient(port: port)
            try c.send(raw)
            let r = try c.readResponse()
            XCTAssertEqual(r.status, status, String(raw.prefix(60)))
            XCTAssertEqual(r.header("Connection"), "close")
            XCTAssertNotNil(r.header("X-Request-Id"))
            let json = try JSONValue.parse(r.body)
            XCTAssertNotNil(json["error"]?["code"]?.stringValue)
            XCTAssertTrue(c.waitForClose(), "connection closed after \(status)")
        }
    }

    func testRoutingErrorsAndInternalErrors() throws {
        try startServer()
        let c = try RawClient(port: port)
        try c.send(request("GET", "/missing"))
        let nf = try c.readResponse()
        XCTAssertEqual(nf.status, 404)
        XCTAssertNotNil(nf.header("X-Request-Id"))
        try c.send(request("DELETE", "/hello"))
        let na = try c.readResponse()
        XCTAssertEqual(na.status, 405)
        XCTAssertEqual(na.header("Allow"), "GET, HEAD")
        try c.send(request("GET", "/boom"))
        let ie = try c.readResponse()
        XCTAssertEqual(ie.status, 500)
        XCTAssertEqual(ie.bodyString, #"{"error":{"code":"INTERNAL","message":"Internal server error"}}"#)
        try c.send(request("GET", "/hello"))
        XCTAssertEqual(try c.readResponse().status, 200, "connection survives handler errors")
        let recorded = observer.finished.current
        XCTAssertTrue(recorded.contains { $0.0 == "GET" && $0.1 == "/hello" && $0.2 == 200 })
        XCTAssertTrue(recorded.contains { $0.0 == "GET" && $0.1 == nil && $0.2 == 404 })
    }

    func testTwoHundredConcurrentConnections() throws {
        try startServer()
        var clients: [RawClient] = []
        for _ in 0..<200 { clients.append(try RawClient(port: port)) }
        for (i, c) in clients.enumerated() { try c.send(request("GET", "/rooms/\(i)")) }
        for (i, c) in clients.enumerated() {
            let r = try c.readResponse()
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.bodyString, "\(i)")
        }
        XCTAssertEqual(server.openConnections, 200)
        clients.removeAll()
        let server = self.server!
        blockUntil(timeout: .seconds(5)) { server.openConnections == 0 }
        XCTAssertEqual(server.openConnections, 0)
        XCTAssertEqual(observer.opened.current, 200)
        XCTAssertEqual(observer.closed.current, 200)
    }

    func testIdleTimeoutClosesConnection() throws {
        try startServer { c in
            c.idleTimeout = .milliseconds(150)
            c.timeoutCheckInterval = .milliseconds(20)
        }
        let c = try RawClient(port: port)
        try c.send(request("GET", "/hello"))
        XCTAssertEqual(try c.readResponse().status, 200)
        let start = SystemClock().now()
        XCTAssertTrue(c.waitForClose())
        let elapsed = SystemClock().now() - start
        XCTAssertGreaterThanOrEqual(elapsed, 100_000_000)
        XCTAssertLessThan(elapsed, 3_000_000_000)
    }

    func testHeaderReadTimeoutWithManualClock() throws {
        let clock = ManualClock()
        try startServer { c in
            c.clock = clock
            c.timeoutCheckInterval = .milliseconds(10)
        }
        let c = try RawClient(port: port)
        try c.send("GET /hello HTTP/1.1\r\nHost: h\r\n") // incomplete head
        let server = self.server!
        XCTAssertTrue(blockUntil { server.openConnections == 1 })
        let loops = try XCTUnwrap(server.eventLoopGroup)
        TestSockets.waitUntilDelivered(c.fd)
        loops.waitForTurns()  // the loop read the first bytes
        clock.advance(by: 9_000_000_000)
        loops.waitForTurns()  // and ran its timeout check at 9 s
        try c.send("X-More: 1\r\n")
        TestSockets.waitUntilDelivered(c.fd)
        loops.waitForTurns()
        clock.advance(by: 1_500_000_000) // 10.5 s since the first byte
        XCTAssertTrue(c.waitForClose())
    }

    func testGracefulShutdownFinishesInFlightRequest() async throws {
        try startServer()
        let c = try RawClient(port: port)
        let idle = try RawClient(port: port)
        try idle.send(request("GET", "/hello"))
        XCTAssertEqual(try idle.readResponse().status, 200)
        try c.send(request("GET", "/slow"))
        let slowStarted = slowStarted
        let inFlight = await until { slowStarted.current == 1 }
        XCTAssertTrue(inFlight, "the slow request is in flight")
        let s = server!
        let shutdown = Task { await s.shutdown() }
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.bodyString, "slow done")
        XCTAssertEqual(r.header("Connection"), "close")
        XCTAssertTrue(c.waitForClose())
        XCTAssertTrue(idle.waitForClose(), "idle kept-alive connection closed on shutdown")
        await shutdown.value
        XCTAssertEqual(server.openConnections, 0)
        XCTAssertThrowsError(try RawClient(port: port), "listener closed")
    }

    func testNewRequestDuringShutdownGets503() async throws {
        // One loop: the idle probe below closing shows the drain began where `late` lives.
        try startServer { $0.eventLoops = 1 }
        let probe = try RawClient(port: port)
        try probe.send(request("GET", "/hello"))
        XCTAssertEqual(try probe.readResponse().status, 200)
        // A pipelined request behind an in-flight one: the in-flight response says Connection: close.
        let busy = try RawClient(port: port)
        try busy.send(request("GET", "/slow") + request("GET", "/hello"))
        // A request whose head is still arriving when the shutdown starts gets 503 + close.
        let late = try RawClient(port: port)
        try late.send("GET /hello HTTP/1.1\r\nHost: h\r\n")
        let s = server!
        let slowStarted = slowStarted
        let inFlight = await until { slowStarted.current == 1 && s.openConnections == 3 }
        XCTAssertTrue(inFlight, "the slow request is in flight")
        TestSockets.waitUntilDelivered(late.fd)
        s.eventLoopGroup?.waitForTurns()  // the loop read late's first bytes
        let shutdown = Task { await s.shutdown() }
        XCTAssertTrue(probe.waitForClose(), "the drain began: the idle connection is closed")
        try late.send("\r\n")
        let rejected = try late.readResponse()
        XCTAssertEqual(rejected.status, 503)
        XCTAssertEqual(rejected.header("Connection"), "close")
        XCTAssertEqual(try JSONValue.parse(rejected.body)["error"]?["code"]?.stringValue, "SERVICE_UNAVAILABLE")
        XCTAssertTrue(late.waitForClose())
        let first = try busy.readResponse()
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.header("Connection"), "close")
        XCTAssertTrue(busy.waitForClose())
        await shutdown.value
    }

    func testMaxConnectionsAnswers503() throws {
        try startServer { c in c.maxConnections = 2 }
        let a = try RawClient(port: port)
        let b = try RawClient(port: port)
        try a.send(request("GET", "/hello"))
        try b.send(request("GET", "/hello"))
        XCTAssertEqual(try a.readResponse().status, 200)
        XCTAssertEqual(try b.readResponse().status, 200)
        let c = try RawClient(port: port)
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 503)
        XCTAssertNotNil(r.header("X-Request-Id"))
        XCTAssertTrue(c.waitForClose())
        XCTAssertEqual(server.openConnections, 2)
    }

    func testLargeResponseIsFlushedCompletely() throws {
        try startServer()
        let c = try RawClient(port: port)
        let payload = String(repeating: "0123456789", count: 6000)
        try c.send(request("POST", "/echo", body: payload))
        XCTAssertEqual(try c.readResponse().bodyString, payload)
    }
}
