import TSDomain
import XCTest

final class LoginThrottleTests: XCTestCase {
    func testRefusesAfterMaxFailuresUntilTheWindowPasses() {
        var t = LoginThrottle(maxFailures: 3, windowSeconds: 60)
        for s in [100, 110, 120] as [Int64] {
            XCTAssertNil(t.retryAfter("user:a", now: s))
            t.recordFailure("user:a", now: s)
        }
        XCTAssertEqual(t.retryAfter("user:a", now: 121), 39, "counted from the first failure at 100")
        XCTAssertNil(t.retryAfter("user:b", now: 121), "other keys are not affected")
        XCTAssertNil(t.retryAfter("user:a", now: 160), "the window has passed")
        t.recordFailure("user:a", now: 160)
        XCTAssertNil(t.retryAfter("user:a", now: 161), "a new window starts with one failure")
    }

    func testSuccessClearsAndZeroDisables() {
        var t = LoginThrottle(maxFailures: 2, windowSeconds: 60)
        t.recordFailure("k", now: 0)
        t.recordSuccess("k")
        t.recordFailure("k", now: 1)
        XCTAssertNil(t.retryAfter("k", now: 2))
        var off = LoginThrottle(maxFailures: 0, windowSeconds: 60)
        for i in 0..<100 { off.recordFailure("k", now: Int64(i)) }
        XCTAssertNil(off.retryAfter("k", now: 100))
    }

    func testTrackedKeysStayBounded() {
        var t = LoginThrottle(maxFailures: 5, windowSeconds: 1_000, maxKeys: 100)
        for i in 0..<1_000 { t.recordFailure("addr:\(i)", now: Int64(i)) }
        XCTAssertLessThanOrEqual(t.trackedKeys, 100)
    }
}
