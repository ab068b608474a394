@testable import TSRealtime
import XCTest

/// How a node reads the other nodes' message numbers (RedisEventBridge+PeerNumbers.swift): a
/// number seen again is a copy of a re-sent XADD, a jump is how many never arrived, and the table
/// stays within its capacity.
final class PeerNumbersTests: XCTestCase {
    func testTheFirstNumberFromANodeIsTakenAsItIsThenCopiesAndGapsAreTold() {
        var p = PeerNumbers(capacity: 8)
        XCTAssertEqual(p.record(node: "a", number: 17), .next, "a node started before this one: no gap for what came before")
        XCTAssertEqual(p.record(node: "a", number: 18), .next)
        XCTAssertEqual(p.record(node: "a", number: 18), .duplicate)
        XCTAssertEqual(p.record(node: "a", number: 12), .duplicate)
        XCTAssertEqual(p.record(node: "a", number: 22), .gap(missing: 3))
        XCTAssertEqual(p.record(node: "b", number: 1), .next, "nodes are numbered apart")
        XCTAssertEqual(p.record(node: "a", number: 23), .next)
    }

    func testTheNodeHeardFromLeastRecentlyIsForgottenPastCapacity() {
        var p = PeerNumbers(capacity: 2)
        _ = p.record(node: "a", number: 5)
        _ = p.record(node: "b", number: 5)
        _ = p.record(node: "a", number: 6)
        _ = p.record(node: "c", number: 1)   // b is the oldest: forgotten
        XCTAssertEqual(p.count, 2)
        XCTAssertEqual(p.record(node: "a", number: 6), .duplicate, "a is still known")
        XCTAssertEqual(p.record(node: "b", number: 3), .next, "b was forgotten: its next number is taken as its first")
    }
}
