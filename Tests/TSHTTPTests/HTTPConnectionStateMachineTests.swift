import TSSockets
import XCTest
@testable import TSHTTP

/// `HTTPConnectionStateMachine` event by event, with byte fixtures: what each read, response,
/// write completion, tick, shutdown and close makes the connection do. No sockets: the live
/// behaviour is covered by `HTTPServerTests`, `TimeoutAndLoopTests` and `HTTPTransportLimitsTests`.
final class HTTPConnectionStateMachineTests: XCTestCase {
    typealias Machine = HTTPConnectionStateMachine

    static let get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
    static let getClose = "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    static let upgrade = "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    static let second = 1_000_000_000

    func machine(limits: HTTPParserLimits = HTTPParserLimits(), drainLowWater: Int = 1000) -> Machine {
        let timeouts = HTTPConnectionTimeouts(headerReadTimeout: 10 * UInt64(Self.second), idleTimeout: 60 * UInt64(Self.second),
                                              bodyReadTimeout: 30 * UInt64(Self.second), now: 0)
        return Machine(limits: limits, timeouts: timeouts, drainLowWater: drainLowWater)
    }

    /// The target of a `.dispatch` step, else a failure.
    func dispatchedTarget(_ step: Machine.Step, file: StaticString = #filePath, line: UInt = #line) -> String? {
        guard case .dispatch(let head, _) = step else {
            XCTFail("expected dispatch, got \(step)", file: file, line: line)
            return nil
        }
        return head.target
    }

    func assertReadMore(_ step: Machine.Step, file: StaticString = #filePath, line: UInt = #line) {
        guard case .readMore = step else { return XCTFail("expected readMore, got \(step)", file: file, line: line) }
    }

    func testKeepAliveRequestIsServedThenTheConnectionReadsAgain() {
        var m = machine()
        m.bytesRead(Array(Self.get.utf8))
        XCTAssertEqual(dispatchedTarget(m.nextStep(now: 1)), "/a")
        XCTAssertEqual(m.state, .awaitingResponse)
        assertReadMore(m.nextStep(now: 1))
        XCTAssertFalse(m.readCompleted(now: 1))
        XCTAssertEqual(m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true),
                       .write(keepAlive: true))
        XCTAssertEqual(m.responseWritten(keepAlive: true, outboundBufferedBytes: 0, now: 2), .serveNext(resumeReading: false))
        XCTAssertEqual(m.state, .reading)
        assertReadMore(m.nextStep(now: 2))
        XCTAssertEqual(m.servedAfterResponse(outboundBufferedBytes: 0, now: 2), .none)
    }

    func testPipelinedRequestsAreServedOneAtATimeInOrder() {
        var m = machine()
        m.bytesRead(Array((Self.get + Self.getClose).utf8))
        XCTAssertEqual(dispatchedTarget(m.nextStep(now: 0)), "/a")
        assertReadMore(m.nextStep(now: 0))  // the second waits for the first's response
        _ = m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true)
        XCTAssertEqual(m.responseWritten(keepAlive: true, outboundBufferedBytes: 10, now: 0), .serveNext(resumeReading: false))
        XCTAssertEqual(dispatchedTarget(m.nextStep(now: 0)), "/c")
        XCTAssertEqual(m.responseReady(keepAliveRequested: false, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true),
                       .write(keepAlive: false))
        XCTAssertEqual(m.responseWritten(keepAlive: false, outboundBufferedBytes: 0, now: 0), .closeGracefully(.local("Connection: close")))
        XCTAssertEqual(m.state, .closing)
        assertReadMore(m.nextStep(now: 0))
        XCTAssertTrue(m.closed(.peerClosed))
        XCTAssertEqual(m.state, .closed(.peerClosed))
    }

    func testRequestSplitAcrossReadsIsDispatchedOnceComplete() {
        var m = machine()
        let bytes = Array("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello".utf8)
        m.bytesRead(Array(bytes[..<10]))
        assertReadMore(m.nextStep(now: 0))
        m.bytesRead(Array(bytes[10..<(bytes.count - 2)]))
        assertReadMore(m.nextStep(now: 0))
        m.bytesRead(Array(bytes[(bytes.count - 2)...]))
        guard case .dispatch(let head, let body) = m.nextStep(now: 0) else { return XCTFail() }
        XCTAssertEqual(head.method, .POST)
        XCTAssertEqual(body, Array("hello".utf8))
    }

    func testLargeResponseHoldsTheNextRequestUntilDelivered() {
        var m = machine(drainLowWater: 1000)
        m.bytesRead(Array((Self.get + Self.get).utf8))
        _ = m.nextStep(now: 0)
        _ = m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true)
        XCTAssertEqual(m.responseWritten(keepAlive: true, outboundBufferedBytes: 1001, now: 0), .awaitDrain)
        XCTAssertEqual(m.state, .awaitingDrain)
        assertReadMore(m.nextStep(now: 0))
        XCTAssertEqual(m.responseDelivered(), .serveNext(resumeReading: false))
        XCTAssertEqual(dispatchedTarget(m.nextStep(now: 0)), "/a")
        // A delivery while no drain is awaited changes nothing.
        XCTAssertEqual(m.responseDelivered(), .none)
    }

    func testReadingPausesWhileServingWhenTooMuchArrivesAndResumesAfter() {
        let limits = HTTPParserLimits(maxRequestLineBytes: 100, maxHeaderBytes: 100, maxBodyBytes: 100)
        var m = machine(limits: limits)
        XCTAssertEqual(m.pauseReadingAbove, 300)
        m.bytesRead(Array(Self.get.utf8))
        _ = m.nextStep(now: 0)
        m.bytesRead([UInt8](repeating: UInt8(ascii: "G"), count: 301))
        assertReadMore(m.nextStep(now: 0))
        XCTAssertTrue(m.readCompleted(now: 0), "over one maximal request ahead: pause")
        XCTAssertFalse(m.readCompleted(now: 0), "paused once")
        _ = m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true)
        XCTAssertEqual(m.responseWritten(keepAlive: true, outboundBufferedBytes: 0, now: 0), .serveNext(resumeReading: true))
    }

    func testMalformedRequestIsRejectedAndNothingMoreIsServed() {
        var m = machine()
        m.bytesRead(Array("GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".utf8))
        guard case .reject(let error) = m.nextStep(now: 0) else { return XCTFail() }
        XCTAssertEqual(error.status, 400)
        XCTAssertEqual(m.state, .closing)
        m.bytesRead(Array(Self.get.utf8))
        assertReadMore(m.nextStep(now: 0))
        XCTAssertEqual(m.timerFired(now: 100 * UInt64(Self.second)), .stop)
    }

    func testExpectContinueIsAnsweredThenTheBodyDispatched() {
        var m = machine()
        m.bytesRead(Array("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        guard case .writeContinue = m.nextStep(now: 0) else { return XCTFail() }
        assertReadMore(m.nextStep(now: 0))
        m.bytesRead(Array("abc".utf8))
        guard case .dispatch(_, let body) = m.nextStep(now: 0) else { return XCTFail() }
        XCTAssertEqual(body, Array("abc".utf8))
    }

    func testUpgradeHandsOverTheBytesReadPastTheRequest() {
        var m = machine()
        let frame: [UInt8] = [0x81, 0x80, 1, 2, 3, 4]
        m.bytesRead(Array(Self.upgrade.utf8) + frame)
        _ = m.nextStep(now: 0)
        XCTAssertEqual(m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: true, connectionOpen: true),
                       .upgrade(leftover: frame))
        XCTAssertEqual(m.state, .upgraded)
        XCTAssertFalse(m.isServing)
        XCTAssertEqual(m.timerFired(now: 100 * UInt64(Self.second)), .stop)
        XCTAssertFalse(m.closed(.peerClosed), "an upgraded connection is no longer counted here")
    }

    func testTimeoutsByPhase() {
        let s = UInt64(Self.second)
        var idle = machine()
        XCTAssertEqual(idle.timerFired(now: 59 * s), .rearm)
        XCTAssertEqual(idle.timerFired(now: 60 * s), .closeIdleTimeout)
        XCTAssertEqual(idle.state, .closing)

        var head = machine()
        head.bytesRead(Array("GET / HT".utf8))
        assertReadMore(head.nextStep(now: 5 * s))
        _ = head.readCompleted(now: 5 * s)
        XCTAssertEqual(head.timerFired(now: 14 * s), .rearm)
        XCTAssertEqual(head.timerFired(now: 15 * s), .closeHeaderReadTimeout)

        var body = machine()
        body.bytesRead(Array("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\nabc".utf8))
        assertReadMore(body.nextStep(now: 0))
        _ = body.readCompleted(now: 0)
        body.bytesRead(Array("d".utf8))
        _ = body.readCompleted(now: 29 * s)
        XCTAssertEqual(body.timerFired(now: 29 * s), .rearm)
        XCTAssertEqual(body.timerFired(now: 30 * s), .requestTimeout, "a total deadline: the trickled byte did not extend it")

        var busy = machine()
        busy.bytesRead(Array(Self.get.utf8))
        _ = busy.nextStep(now: 0)
        XCTAssertEqual(busy.timerFired(now: 1000 * s), .rearm, "the handler owns its latency")
    }

    func testShutdownClosesAnIdleConnectionAtOnce() {
        var m = machine()
        XCTAssertEqual(m.shutdown(outboundBufferedBytes: 0), .close)
        var pending = machine()
        XCTAssertEqual(pending.shutdown(outboundBufferedBytes: 5), .closeGracefully)
        var arriving = machine()
        arriving.bytesRead(Array("GET /".utf8))
        XCTAssertEqual(arriving.shutdown(outboundBufferedBytes: 0), .none, "a request under way is answered first")
    }

    func testShutdownDuringARequestClosesAfterItsResponse() {
        var m = machine()
        m.bytesRead(Array(Self.get.utf8))
        _ = m.nextStep(now: 0)
        XCTAssertEqual(m.shutdown(outboundBufferedBytes: 0), .none)
        XCTAssertEqual(m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true),
                       .write(keepAlive: false))
        XCTAssertEqual(m.responseWritten(keepAlive: false, outboundBufferedBytes: 0, now: 0), .closeGracefully(.serverShutdown))
    }

    func testRequestArrivingDuringShutdownIsRefusedWithoutContinue() {
        var m = machine()
        m.bytesRead(Array("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n".utf8))
        XCTAssertEqual(m.shutdown(outboundBufferedBytes: 0), .none)
        assertReadMore(m.nextStep(now: 0))  // no 100 Continue while shutting down
        m.bytesRead(Array("x".utf8))
        guard case .refuseShuttingDown(let head, _) = m.nextStep(now: 0) else { return XCTFail() }
        XCTAssertEqual(head.target, "/u")
        XCTAssertEqual(m.responseReady(keepAliveRequested: false, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: true),
                       .write(keepAlive: false))
    }

    func testResponseWithoutAnswerClosesAtOnce() {
        var m = machine()
        m.bytesRead(Array(Self.get.utf8))
        _ = m.nextStep(now: 0)
        XCTAssertEqual(m.responseReady(keepAliveRequested: true, closesWithoutAnswer: true, isUpgrade: false, connectionOpen: true),
                       .closeWithoutAnswer)
        XCTAssertEqual(m.state, .closing)
    }

    func testPeerCloseWhileTheHandlerRunsDropsItsResponse() {
        var m = machine()
        m.bytesRead(Array(Self.get.utf8))
        _ = m.nextStep(now: 0)
        XCTAssertTrue(m.closed(.peerClosed))
        XCTAssertFalse(m.closed(.peerClosed), "reported once")
        XCTAssertEqual(m.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: false),
                       .drop(.peerClosed))
        var closing = machine()
        closing.bytesRead(Array(Self.get.utf8))
        _ = closing.nextStep(now: 0)
        XCTAssertEqual(closing.responseReady(keepAliveRequested: true, closesWithoutAnswer: false, isUpgrade: false, connectionOpen: false),
                       .drop(.local("closing")))
    }

    func testServingLoopIsNotReentered() {
        var m = machine()
        XCTAssertTrue(m.beginServing())
        XCTAssertFalse(m.beginServing())
        m.endServing()
        XCTAssertTrue(m.beginServing())
    }
}
