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

/// The keys `AuthService.login` uses: one user's failures never refuse another
/// user, nor the same user from another address.
final class LoginThrottleKeyTests: XCTestCase {
    func testPairKeysSeparateUsersAndAddresses() {
        var t = LoginThrottle(maxFailures: 10, windowSeconds: 300)
        let bobHere = LoginThrottle.pair(username: "bob", address: "10.0.0.1")
        for s in 0..<10 { t.recordFailure(bobHere, now: Int64(s)) }
        XCTAssertEqual(t.retryAfter(bobHere, now: 10), 290)
        XCTAssertNil(t.retryAfter(LoginThrottle.pair(username: "alice", address: "10.0.0.1"), now: 10))
        XCTAssertNil(t.retryAfter(LoginThrottle.pair(username: "bob", address: "10.0.0.2"), now: 10))
        XCTAssertNil(t.addressRetryAfter("10.0.0.1", nowMicroseconds: 10_000_000), "pair failures alone do not spend the address's rate")
        // A name or address cannot be crafted to collide with another pair.
        XCTAssertNotEqual(LoginThrottle.pair(username: "b", address: "a:c"), LoginThrottle.pair(username: "c", address: "a:b"))
    }

    /// The address rate is a rate: past its burst an address waits for the next token (seconds),
    /// never a window, and other addresses are not affected.
    func testAddressFailuresAreARateNotALockOut() {
        var t = LoginThrottle(maxFailures: 10, windowSeconds: 300, addressRule: .init(count: 30, periodSeconds: 60, burst: 5))
        for i in 0..<5 {
            XCTAssertNil(t.addressRetryAfter("10.0.0.1", nowMicroseconds: Int64(i)))
            t.recordAddressFailure("10.0.0.1", nowMicroseconds: Int64(i))
        }
        XCTAssertEqual(t.addressRetryAfter("10.0.0.1", nowMicroseconds: 5), 2, "30 a minute: one every 2 s")
        XCTAssertNil(t.addressRetryAfter("10.0.0.2", nowMicroseconds: 5))
        XCTAssertNil(t.addressRetryAfter("10.0.0.1", nowMicroseconds: 2_000_005), "one token back after 2 s, not after the window")
        var off = LoginThrottle(addressRule: .init(count: 0, periodSeconds: 60, burst: 1))
        for i in 0..<100 { off.recordAddressFailure("a", nowMicroseconds: Int64(i)) }
        XCTAssertNil(off.addressRetryAfter("a", nowMicroseconds: 100))
    }

    func testAFullTableKeepsTheNewestEntriesAndStaysBounded() {
        var t = LoginThrottle(maxFailures: 2, windowSeconds: 1_000, maxKeys: 1_000)
        for i in 0..<100_000 { t.recordFailure("addr:\(i)", now: Int64(i / 100)) }
        XCTAssertLessThanOrEqual(t.trackedKeys, 1_000)
        // The newest key is kept and counts on.
        t.recordFailure("addr:99999", now: 999)
        XCTAssertNotNil(t.retryAfter("addr:99999", now: 999))
        // Expired entries go first: after the window, a full table is emptied of them.
        var small = LoginThrottle(maxFailures: 2, windowSeconds: 100, maxKeys: 4)
        for k in ["a", "b", "c", "d"] { small.recordFailure(k, now: 0) }
        small.recordFailure("late", now: 200)
        XCTAssertEqual(small.trackedKeys, 1)
    }

    func testFailuresOfAnExistingKeyNeverEvict() {
        var t = LoginThrottle(maxFailures: 3, windowSeconds: 100, maxKeys: 4)
        for k in ["a", "b", "c", "d"] { t.recordFailure(k, now: 0) }
        for _ in 0..<10 { t.recordFailure("a", now: 1) }
        XCTAssertEqual(t.trackedKeys, 4)
        XCTAssertNotNil(t.retryAfter("a", now: 2))
    }
}
