import Logging
import Synchronization
import TSDomain
import TSJSON
import TSRealtime
import TSRoutes
import TSSocketIO
import TSSockets
import XCTest

/// The broadcaster reads what an event's payloads need before the event enters its room's drain:
/// a room's events are read concurrently, and still leave in commit order.
final class RealtimePrefetchTests: XCTestCase {
    /// Holds every `memberIds` call until the test releases them, last caller first; fulfils
    /// `allInFlight` once `expected` of them wait together (they never would if the drain read one
    /// event at a time).
    final class GatedReads: RecipientReads {
        struct State {
            var waiting: [(roomEvent: Int, resume: CheckedContinuation<[String], any Error>)] = []
            var maxInFlight = 0
            var calls = 0
        }

        let expected: Int
        let state = Mutex(State())
        let allInFlight = XCTestExpectation(description: "every read in flight at once")

        init(expected: Int) { self.expected = expected }

        func memberIds(roomId: String) async throws -> [String] {
            try await withCheckedThrowingContinuation { c in
                let all = state.withLock { s in
                    s.calls += 1
                    s.waiting.append((s.calls, c))
                    s.maxInFlight = max(s.maxInFlight, s.waiting.count)
                    return s.waiting.count == expected
                }
                if all { allInFlight.fulfill() }
            }
        }

        /// Answers every held read, the last one first.
        func releaseLastFirst() {
            let held = state.withLock { s in defer { s.waiting = [] }; return s.waiting }
            for w in held.reversed() { w.resume.resume(returning: ["member-\(w.roomEvent)"]) }
        }

        func heartedBy(elementId: String) async throws -> Set<String> { [] }
        func rooms(roomId: String, viewers: [String]) async throws -> [String: Room] { [:] }
    }

    func testEventsOfARoomAreReadConcurrentlyAndLeaveInCommitOrder() async throws {
        let hub = try SocketIOServer(configuration: SocketIOConfiguration(), clock: SystemClock(), logger: Logger(label: "test"))
        let log = RealtimeEventLog(capacity: 100)
        log.observe(hub)
        let reads = GatedReads(expected: 3)
        let broadcaster = RealtimeBroadcaster(hub: hub, reads: reads, configuration: RealtimeConfiguration(globalEvents: .members),
                                              clock: SystemClock(), recovery: nil, logger: Logger(label: "test"))
        for (i, actor) in ["a1", "a2", "a3"].enumerated() {
            broadcaster.publish(DomainEvent(kind: .roomCleared(deleted: 0), roomId: "r1", actorId: actor, originSocketId: nil))
            // The next event is published once this one's read has begun: an event published
            // while its room's read still waits for its turn shares that read (the burst test).
            let deadline = ContinuousClock.now + .seconds(10)
            while reads.state.withLock({ $0.calls }) < i + 1, ContinuousClock.now < deadline { await Task.yield() }
        }
        await fulfillment(of: [reads.allInFlight], timeout: 10)
        reads.releaseLastFirst()
        await broadcaster.flush()

        XCTAssertEqual(reads.state.withLock { $0.maxInFlight }, 3, "the three events' reads were in flight together")
        let entries = log.events(since: 0, limit: 100).entries
        let cleared = entries.filter { $0.event == "room:cleared" }.compactMap { $0.args.first?["clearedBy"]?.stringValue }
        XCTAssertEqual(cleared, ["a1", "a2", "a3"], "commit order, although the reads answered last first")
        XCTAssertEqual(entries.filter { $0.event == "room:cleared:global" }.count, 3, "each to the members its own read returned")
    }

    /// The gap wait (a missing room number) runs on the injected clock: while it stands still the
    /// event after the gap waits, however long; moved past `realtime.gapWait`, the number is given up.
    func testTheGapWaitRunsOnTheInjectedClock() async throws {
        let hub = try SocketIOServer(configuration: SocketIOConfiguration(), clock: SystemClock(), logger: Logger(label: "test"))
        let log = RealtimeEventLog(capacity: 100)
        log.observe(hub)
        var configuration = RealtimeConfiguration(globalEvents: .all)
        configuration.gapWait = .milliseconds(20)
        let clock = ManualClock()
        let broadcaster = RealtimeBroadcaster(hub: hub, reads: GatedReads(expected: 1), configuration: configuration, clock: clock,
                                              recovery: nil, logger: Logger(label: "test"))
        func cleared() -> [String] {
            log.events(since: 0, limit: 100).entries.filter { $0.event == "room:cleared" }.compactMap { $0.args.first?["clearedBy"]?.stringValue }
        }
        /// Waits for the log's next record (10 s at most), then compares.
        func waitFor(_ expected: [String], after sequence: Int64) async {
            _ = await log.waitForEvent(after: sequence, timeoutMilliseconds: 10_000)
            XCTAssertEqual(cleared(), expected)
        }
        broadcaster.publish(DomainEvent(kind: .roomCleared(deleted: 0), roomId: "r1", actorId: "a1", originSocketId: nil, seq: 1))
        broadcaster.publish(DomainEvent(kind: .roomCleared(deleted: 0), roomId: "r1", actorId: "a3", originSocketId: nil, seq: 3))
        await waitFor(["a1"], after: 0)
        // Number 1 is two records with `globalEvents: .all` (room:cleared, then room:cleared:global),
        // appended one after the other: the quiet window below starts after both.
        let bothDeadline = ContinuousClock.now + .seconds(10)
        while log.events(since: 0, limit: 100).entries.count < 2, ContinuousClock.now < bothDeadline {
            _ = await log.waitForEvent(after: log.lastSequence, timeoutMilliseconds: 1_000)
        }
        XCTAssertEqual(log.events(since: 0, limit: 100).entries.map(\.event), ["room:cleared", "room:cleared:global"])
        // Ten gap waits of real time, the injected clock standing still: nothing more is recorded,
        // number 2 is still awaited.
        let afterFirst = log.lastSequence
        let outcome = await log.waitForEvent(after: afterFirst, timeoutMilliseconds: 200)
        XCTAssertEqual(outcome, .timedOut)
        XCTAssertEqual(cleared(), ["a1"])
        XCTAssertEqual(broadcaster.queuedEvents(roomId: "r1"), 1)
        clock.advance(by: 1_000_000_000)
        await waitFor(["a1", "a3"], after: afterFirst)
        XCTAssertEqual(broadcaster.orderCounters.skipped, 1, "number 2 given up")
    }
}
