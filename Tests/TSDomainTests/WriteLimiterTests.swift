import TSDomain
import XCTest

/// The per-user token buckets (`WriteLimiter`) on an explicit clock: burst, refill, Retry-After,
/// independence of users and kinds, and the bounded table.
final class WriteLimiterTests: XCTestCase {
    let rule = WriteLimiter.Rule(perSecond: 2, burst: 3)
    let second: Int64 = 1_000_000

    func testABurstThenOneWriteEachRefill() {
        var l = WriteLimiter()
        for _ in 0..<3 { XCTAssertEqual(l.take(kind: 0, user: "alice", rule: rule, now: 0), .allowed) }
        XCTAssertEqual(l.take(kind: 0, user: "alice", rule: rule, now: 0), .refused(retryAfterMicroseconds: 500_000, firstInRow: true))
        XCTAssertEqual(l.take(kind: 0, user: "alice", rule: rule, now: 100_000), .refused(retryAfterMicroseconds: 400_000, firstInRow: false),
                       "only the first refusal of a run is worth a log line")
        XCTAssertEqual(l.take(kind: 0, user: "alice", rule: rule, now: 500_000), .allowed, "one token back after 1/perSecond")
        XCTAssertNotEqual(l.take(kind: 0, user: "alice", rule: rule, now: 500_000), .allowed)
        // Idle long enough: the bucket is full again, never fuller than the burst.
        for _ in 0..<3 { XCTAssertEqual(l.take(kind: 0, user: "alice", rule: rule, now: 60 * second), .allowed) }
        XCTAssertNotEqual(l.take(kind: 0, user: "alice", rule: rule, now: 60 * second), .allowed)
    }

    func testOneUserAtTheLimitLeavesOthersAndOtherKindsAlone() {
        var l = WriteLimiter()
        for _ in 0..<10 { _ = l.take(kind: 0, user: "alice", rule: rule, now: 0) }
        for _ in 0..<3 { XCTAssertEqual(l.take(kind: 0, user: "bob", rule: rule, now: 0), .allowed) }
        XCTAssertEqual(l.take(kind: 1, user: "alice", rule: rule, now: 0), .allowed)
    }

    func testAClockThatStepsBackRefillsNothing() {
        var l = WriteLimiter()
        for _ in 0..<3 { _ = l.take(kind: 0, user: "alice", rule: rule, now: 10 * second) }
        XCTAssertNotEqual(l.take(kind: 0, user: "alice", rule: rule, now: 0), .allowed)
    }

    /// Sign-ups are counted per hour: 100 an hour is one every 36 s, and `wait` peeks without taking.
    func testAnHourlyRuleRefillsAtItsRateAndWaitTakesNothing() {
        var l = WriteLimiter()
        let hourly = WriteLimiter.Rule(count: 100, periodSeconds: 3600, burst: 2)
        XCTAssertNil(l.wait(kind: 0, user: "10.0.0.1", rule: hourly, now: 0))
        for _ in 0..<2 { XCTAssertEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 0), .allowed) }
        XCTAssertEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 0), .refused(retryAfterMicroseconds: 36 * second, firstInRow: true))
        let wait = try? XCTUnwrap(l.wait(kind: 0, user: "10.0.0.1", rule: hourly, now: 35 * second))
        XCTAssertEqual(Double(wait ?? 0), Double(second), accuracy: 100, "about 1 s left of the 36")
        XCTAssertEqual(l.wait(kind: 0, user: "10.0.0.1", rule: hourly, now: 35 * second), wait, "wait takes nothing")
        XCTAssertNil(l.wait(kind: 0, user: "10.0.0.1", rule: hourly, now: 36 * second))
        XCTAssertEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 36 * second), .allowed)
        XCTAssertNotEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 36 * second), .allowed)
        // A day idle fills the bucket to its burst, never more.
        for _ in 0..<2 { XCTAssertEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 86_400 * second), .allowed) }
        XCTAssertNotEqual(l.take(kind: 0, user: "10.0.0.1", rule: hourly, now: 86_400 * second), .allowed)
        l.removeAll()
        XCTAssertEqual(l.trackedKeys, 0)
    }

    func testZeroPerSecondIsNoLimit() {
        var l = WriteLimiter()
        for _ in 0..<1000 { XCTAssertEqual(l.take(kind: 0, user: "alice", rule: .init(perSecond: 0, burst: 1), now: 0), .allowed) }
        XCTAssertEqual(l.trackedKeys, 0)
    }

    func testTheTableIsBoundedAndForgetsRefilledBucketsFirst() {
        var l = WriteLimiter(maxKeys: 100)
        // alice spends her burst, then many users write once each, later.
        for _ in 0..<3 { _ = l.take(kind: 0, user: "alice", rule: rule, now: 0) }
        for i in 0..<1000 { _ = l.take(kind: 0, user: "user\(i)", rule: rule, now: Int64(i)) }
        XCTAssertLessThanOrEqual(l.trackedKeys, 100)
        // A million users later, the table is still bounded.
        for i in 0..<5000 { _ = l.take(kind: 0, user: "later\(i)", rule: rule, now: 10 * second + Int64(i)) }
        XCTAssertLessThanOrEqual(l.trackedKeys, 100)
    }

    func testSpentBucketsOutliveRefilledOnesUnderPressure() {
        var l = WriteLimiter(maxKeys: 10)
        let slow = WriteLimiter.Rule(perSecond: 1, burst: 3)
        for _ in 0..<3 { _ = l.take(kind: 0, user: "mallory", rule: slow, now: 0) }  // empty until t = 3 s
        for i in 0..<9 { _ = l.take(kind: 0, user: "u\(i)", rule: slow, now: 0) }     // full again at t = 1 s
        // At t = 2 s the table is full: the refilled buckets go, mallory's empty one stays.
        _ = l.take(kind: 0, user: "newcomer", rule: slow, now: 2 * second)
        XCTAssertEqual(l.take(kind: 0, user: "mallory", rule: slow, now: 2 * second),
                       .allowed, "two tokens back after 2 s: her bucket was kept, not replaced by a full one")
        XCTAssertEqual(l.take(kind: 0, user: "mallory", rule: slow, now: 2 * second), .allowed)
        XCTAssertNotEqual(l.take(kind: 0, user: "mallory", rule: slow, now: 2 * second), .allowed,
                          "a forgotten bucket would have allowed a third")
    }
}
