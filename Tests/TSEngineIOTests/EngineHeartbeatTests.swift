import TSSockets
import XCTest
@testable import TSEngineIO

/// Pure heartbeat decisions (Engine.IO v4, "Heartbeat") driven by a ManualClock.
final class EngineHeartbeatTests: XCTestCase {
    let ms: UInt64 = 1_000_000

    func testPingsEveryIntervalAndTimesOutWithoutPong() {
        let clock = ManualClock()
        var hb = EngineHeartbeat(now: clock.now(), pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        XCTAssertEqual(hb.nextDeadline, clock.now() + 300 * ms)
        clock.advance(by: 299 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .none)
        clock.advance(by: 1 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .sendPing)
        XCTAssertEqual(hb.nextDeadline, clock.now() + 200 * ms)
        clock.advance(by: 100 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .none)
        hb.pongReceived(now: clock.now())
        XCTAssertEqual(hb.nextDeadline, clock.now() + 300 * ms, "next ping one interval after the pong")
        clock.advance(by: 300 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .sendPing)
        clock.advance(by: 200 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .pingTimeout)
        XCTAssertNil(hb.nextDeadline, "nothing left to do after a timeout")
    }

    /// A ping tick that runs late does not push the timeout back: the session still ends at
    /// pingInterval + pingTimeout from its last pong (a polling ping timeout must not fire late).
    func testLatePingTickKeepsTheTimeoutOnSchedule() {
        let clock = ManualClock()
        let start = clock.now()
        var hb = EngineHeartbeat(now: start, pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        clock.advance(by: 315 * ms)  // the timer ran 15 ms late
        XCTAssertEqual(hb.tick(now: clock.now()), .sendPing)
        XCTAssertEqual(hb.nextDeadline, start + 500 * ms)
        XCTAssertFalse(hb.isExpired(at: start + 499 * ms))
        XCTAssertTrue(hb.isExpired(at: start + 500 * ms))
        // Before any tick ran at all, the deadline is already known.
        let fresh = EngineHeartbeat(now: start, pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        XCTAssertFalse(fresh.isExpired(at: start + 499 * ms))
        XCTAssertTrue(fresh.isExpired(at: start + 500 * ms))
    }

    func testATickAtOrPastTheDeadlineTimesOutLikeARequestWould() {
        // The timer and a request racing at pingInterval + pingTimeout agree: the session is dead.
        let clock = ManualClock()
        let start = clock.now()
        var hb = EngineHeartbeat(now: start, pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        XCTAssertTrue(hb.isExpired(at: start + 500 * ms))
        XCTAssertEqual(hb.tick(now: start + 500 * ms), .pingTimeout)
        XCTAssertNil(hb.nextDeadline)
        var late = EngineHeartbeat(now: start, pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        XCTAssertEqual(late.tick(now: start + 499 * ms), .sendPing, "one tick before the deadline still pings")
        XCTAssertEqual(late.nextDeadline, start + 500 * ms)
    }

    func testUnsolicitedPongDoesNotPostponePing() {
        let clock = ManualClock()
        var hb = EngineHeartbeat(now: clock.now(), pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms)
        clock.advance(by: 250 * ms)
        hb.pongReceived(now: clock.now())
        clock.advance(by: 50 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .sendPing)
    }

    func testUpgradeTimeout() {
        let clock = ManualClock()
        var hb = EngineHeartbeat(now: clock.now(), pingIntervalNanoseconds: 1000 * ms, pingTimeoutNanoseconds: 200 * ms)
        hb.upgradeStarted(now: clock.now(), timeoutNanoseconds: 100 * ms)
        XCTAssertEqual(hb.nextDeadline, clock.now() + 100 * ms)
        clock.advance(by: 100 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .upgradeTimeout)
        XCTAssertEqual(hb.tick(now: clock.now()), .none)
        hb.upgradeStarted(now: clock.now(), timeoutNanoseconds: 100 * ms)
        hb.upgradeEnded()
        clock.advance(by: 200 * ms)
        XCTAssertEqual(hb.tick(now: clock.now()), .none)
    }
}
