import XCTest
import Foundation
import TSSockets
import TSTestSupport
@testable import TSHTTP

final class TimeoutAndLoopTests: XCTestCase {
    func testTimeoutDecisionsWithManualClock() {
        let clock = ManualClock()
        var t = HTTPConnectionTimeouts(headerReadTimeout: 10_000, idleTimeout: 60_000, bodyReadTimeout: 30_000, now: clock.now())
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)
        clock.advance(by: 59_999)
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)
        clock.advance(by: 1)
        XCTAssertEqual(t.decision(now: clock.now()), .closeIdleTimeout)

        // A partial head starts the header-read clock, and further bytes do not reset it (slowloris).
        t.update(now: clock.now(), progress: .head, inFlight: false, bytesArrived: true)
        clock.advance(by: 9_000)
        t.update(now: clock.now(), progress: .head, inFlight: false, bytesArrived: true)
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)
        clock.advance(by: 1_000)
        XCTAssertEqual(t.decision(now: clock.now()), .closeHeaderReadTimeout)

        // A running handler is never timed out.
        t.update(now: clock.now(), progress: .idle, inFlight: true, bytesArrived: false)
        clock.advance(by: 1_000_000)
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)

        // After the response: idle from that moment.
        t.update(now: clock.now(), progress: .idle, inFlight: false, bytesArrived: false)
        clock.advance(by: 30_000)
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)

        // The body deadline is total: trickled bytes do not extend it.
        t.update(now: clock.now(), progress: .body, inFlight: false, bytesArrived: true)
        clock.advance(by: 20_000)
        t.update(now: clock.now(), progress: .body, inFlight: false, bytesArrived: true)
        clock.advance(by: 9_999)
        t.update(now: clock.now(), progress: .body, inFlight: false, bytesArrived: true)
        XCTAssertEqual(t.decision(now: clock.now()), .keepOpen)
        clock.advance(by: 1)
        XCTAssertEqual(t.decision(now: clock.now()), .closeBodyReadTimeout)
    }

    func testEventLoopExecuteAndSchedule() throws {
        let group = try EventLoopGroup(count: 2)
        defer { group.shutdown() }
        let loop = group.next()
        XCTAssertFalse(loop.inEventLoop)
        let ran = expectation(description: "execute")
        loop.execute {
            XCTAssertTrue(loop.inEventLoop)
            ran.fulfill()
        }
        let order = LockedValue<[Int]>([])
        let done = expectation(description: "scheduled")
        loop.scheduleTask(in: 30_000_000) { order.withLock { $0.append(2) }; done.fulfill() }
        loop.scheduleTask(in: 10_000_000) { order.withLock { $0.append(1) } }
        let cancelled = loop.scheduleTask(in: 20_000_000) { order.withLock { $0.append(99) } }
        cancelled.cancel()
        wait(for: [ran, done], timeout: 5)
        XCTAssertEqual(order.current, [1, 2])
        XCTAssertNotIdentical(group.next(), group.next())
    }

    func testManualClockDrivesLoopTimers() throws {
        let clock = ManualClock()
        let group = try EventLoopGroup(count: 1, clock: clock)
        defer { group.shutdown() }
        let fired = LockedValue(false)
        group.loops[0].scheduleTask(in: 1_000_000_000) { fired.withLock { $0 = true } }
        group.loops[0].waitForTurns()  // the loop looked at its timers: the clock has not moved
        XCTAssertFalse(fired.current)
        clock.advance(by: 1_000_000_000)
        group.loops[0].execute {} // wake the loop
        XCTAssertTrue(blockUntil(timeout: .seconds(5)) { fired.current })
    }

    func testSocketErrorCapturesErrno() {
        XCTAssertThrowsError(try Socket.makeListener(host: "not an address", port: 0, backlog: 1)) { error in
            guard let e = error as? SocketError else { return XCTFail() }
            XCTAssertEqual(e.syscall, "inet_pton")
        }
        // Binding a port already in use fails with EADDRINUSE and the descriptor is closed.
        guard let a = try? Socket.makeListener(host: "127.0.0.1", port: 0, backlog: 1) else { return XCTFail() }
        defer { a.close() }
        let port = try! a.localPort()
        XCTAssertThrowsError(try Socket.makeListener(host: "127.0.0.1", port: port, backlog: 1)) { error in
            XCTAssertEqual((error as? SocketError)?.errno, EADDRINUSE)
            XCTAssertEqual((error as? SocketError)?.syscall, "bind")
        }
    }
}
