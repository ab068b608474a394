import XCTest
@testable import TSRealtime

/// The bookkeeping behind a cluster-wide test reset (RedisEventBridge+Control.swift): which nodes
/// count as alive, and a round of acknowledgements that ends when every node answered or its
/// deadline passed, never later, and leaves nothing behind. The messages themselves are tested
/// over Redis by conformance/test_cluster_test_mode.py.
final class TestModeControlTests: XCTestCase {
    func testANodeIsNewOnceAndAliveAfterItSpoke() {
        let control = TestModeControl()
        XCTAssertTrue(control.heard("a", label: "host pid 1"))
        XCTAssertFalse(control.heard("a", label: nil), "heard again within the alive window: not new")
        XCTAssertEqual(control.alivePeers(), ["a"])
        XCTAssertEqual(control.describe("a"), "node a (host pid 1)", "a message without a label keeps the known one")
        XCTAssertEqual(control.describe("b"), "node b")
    }

    func testARoundEndsAsSoonAsEveryNodeAnsweredNotAtItsDeadline() async {
        let control = TestModeControl()
        XCTAssertTrue(control.open("r1", waitingFor: ["a", "b"]))
        let started = ContinuousClock.now
        Task {
            control.acknowledge("r1", from: "a", lastSequence: 7)
            control.acknowledge("r1", from: "b", lastSequence: 9)
        }
        let answered = await control.wait("r1", until: started + .seconds(60))
        XCTAssertEqual(answered, ["a": 7, "b": 9])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(30), "it waited for the deadline although everyone answered")
        XCTAssertTrue(control.rounds.withLock { $0.isEmpty }, "a finished round is forgotten")
    }

    func testARoundWithASilentNodeEndsAtItsDeadlineWithWhoAnswered() async {
        let control = TestModeControl()
        XCTAssertTrue(control.open("r2", waitingFor: ["a", "silent"]))
        control.acknowledge("r2", from: "a", lastSequence: 3)
        control.acknowledge("other", from: "silent", lastSequence: 1)  // another round's answer counts not here
        let started = ContinuousClock.now
        let answered = await control.wait("r2", until: started + .milliseconds(200))
        XCTAssertEqual(answered, ["a": 3])
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(150))
        control.acknowledge("r2", from: "silent", lastSequence: 5)  // too late: ignored, nothing kept
        XCTAssertTrue(control.rounds.withLock { $0.isEmpty })
    }

    func testRoundsWaitingAtOnceAreBounded() {
        let control = TestModeControl()
        for i in 0..<TestModeControl.maxRounds { XCTAssertTrue(control.open("r\(i)", waitingFor: ["a"])) }
        XCTAssertFalse(control.open("one more", waitingFor: ["a"]))
    }
}
