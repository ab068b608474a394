import XCTest
@testable import TSSockets

/// Every transition of `ConnectionCloseStateMachine`, one event sequence per path, as the
/// connection drives it: the action each event returns, the state it leaves, the reason reported.
final class ConnectionCloseStateMachineTests: XCTestCase {
    typealias Machine = ConnectionCloseStateMachine
    let reset = SocketError(syscall: "read", errno: ECONNRESET)

    func testANewConnectionIsOpenReadsWhenNotPausedAndSends() {
        let m = Machine()
        XCTAssertEqual(m.state, .open)
        XCTAssertTrue(m.isOpen)
        XCTAssertTrue(m.sendsPending)
        XCTAssertFalse(m.outputFinished)
        XCTAssertTrue(m.wantsRead(readingPaused: false))
        XCTAssertFalse(m.wantsRead(readingPaused: true))
        XCTAssertTrue(m.keepsReading(readingPaused: false))
        XCTAssertFalse(m.keepsReading(readingPaused: true))
    }

    func testGracefulCloseWithOutputPendingFlushesThenLingersThenClosesOnTheTimerWithItsReason() {
        var m = Machine()
        XCTAssertEqual(m.closeGracefully(.serverShutdown, outputPending: true), .awaitFlush)
        XCTAssertEqual(m.state, .flushingThenClose)
        XCTAssertFalse(m.isOpen, "no new writes while closing")
        XCTAssertTrue(m.sendsPending, "what was queued still goes out")
        XCTAssertFalse(m.outputFinished)
        XCTAssertFalse(m.wantsRead(readingPaused: false), "no polling for input until the linger")
        XCTAssertTrue(m.keepsReading(readingPaused: true), "input that arrives is drained")
        XCTAssertEqual(m.closeGracefully(.timeout, outputPending: false), .none, "a second graceful close changes nothing")

        XCTAssertEqual(m.outputFlushed(), .startLinger)
        XCTAssertEqual(m.state, .lingering)
        XCTAssertFalse(m.sendsPending)
        XCTAssertTrue(m.outputFinished)
        XCTAssertTrue(m.wantsRead(readingPaused: true), "a lingering connection drains input even if paused")
        XCTAssertEqual(m.outputFlushed(), .none)

        XCTAssertEqual(m.lingerExpired(), .close(.serverShutdown))
        XCTAssertEqual(m.state, .closed)
        XCTAssertTrue(m.isClosed)
        XCTAssertTrue(m.outputFinished)
        XCTAssertFalse(m.keepsReading(readingPaused: false))
        XCTAssertEqual(m.lingerExpired(), .none)
    }

    func testGracefulCloseWithNothingPendingLingersAtOnce() {
        var m = Machine()
        XCTAssertEqual(m.closeGracefully(.local("done"), outputPending: false), .startLinger)
        XCTAssertEqual(m.state, .lingering)
        XCTAssertEqual(m.reason, .local("done"))
    }

    func testThePeersEOFEndsALingerWithTheGracefulReason() {
        var m = Machine()
        _ = m.closeGracefully(.timeout, outputPending: false)
        XCTAssertEqual(m.peerClosed(), .close(.timeout))
        XCTAssertEqual(m.peerClosed(), .none)
    }

    func testAReadErrorEndsALingerWithTheGracefulReason() {
        var m = Machine()
        _ = m.closeGracefully(.timeout, outputPending: false)
        XCTAssertEqual(m.readFailed(reset), .close(.timeout))
    }

    func testAnErrorWhileFlushingClosesAtOnceKeepingTheGracefulReason() {
        var m = Machine()
        _ = m.closeGracefully(.serverShutdown, outputPending: true)
        XCTAssertEqual(m.closeNow(.slowConsumer), .close(.serverShutdown))
        XCTAssertEqual(m.outputFlushed(), .none, "a flush completing after the close starts nothing")
        XCTAssertEqual(m.lingerExpired(), .none)
    }

    func testEOFWhileFlushingCloses() {
        var m = Machine()
        _ = m.closeGracefully(.serverShutdown, outputPending: true)
        XCTAssertEqual(m.peerClosed(), .close(.serverShutdown))
    }

    func testAnOpenConnectionClosesAtOnceWithTheGivenReasonAndOnlyOnce() {
        var m = Machine()
        XCTAssertEqual(m.closeNow(.slowConsumer), .close(.slowConsumer))
        XCTAssertEqual(m.reason, .slowConsumer)
        XCTAssertEqual(m.closeNow(.timeout), .none)
        XCTAssertEqual(m.closeGracefully(.timeout, outputPending: true), .none)
        XCTAssertEqual(m.reason, .slowConsumer)
    }

    func testPeerCloseAndReadErrorOfAnOpenConnectionAreTheirOwnReasons() {
        var a = Machine()
        XCTAssertEqual(a.peerClosed(), .close(.peerClosed))
        var b = Machine()
        XCTAssertEqual(b.readFailed(reset), .close(.error(reset)))
    }

    func testAResetClosesAnOpenConnectionWithItsReasonOnce() {
        var m = Machine()
        XCTAssertEqual(m.reset(.local("fault")), .resetThenClose(.local("fault")))
        XCTAssertEqual(m.state, .closed)
        XCTAssertEqual(m.reset(.timeout), .none)
        XCTAssertEqual(m.closeNow(.timeout), .none)
    }

    func testAResetWhileLingeringClosesWithTheGracefulReason() {
        var m = Machine()
        _ = m.closeGracefully(.serverShutdown, outputPending: false)
        XCTAssertEqual(m.reset(.local("fault")), .resetThenClose(.serverShutdown))
    }

    func testEventsThatOnlyMeanSomethingWhileClosingAreIgnoredWhenOpen() {
        var m = Machine()
        XCTAssertEqual(m.outputFlushed(), .none)
        XCTAssertEqual(m.lingerExpired(), .none)
        XCTAssertEqual(m.state, .open)
    }
}
