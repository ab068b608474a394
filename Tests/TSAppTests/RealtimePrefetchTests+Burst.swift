import Logging
import Synchronization
import TSDomain
import TSRealtime
import TSSocketIO
import TSSockets
import XCTest

extension RealtimePrefetchTests {
    /// Counts the reads in flight; each one yields a few times before it answers, so that reads
    /// started together overlap.
    final class CountingReads: RecipientReads {
        struct State { var inFlight = 0, maxInFlight = 0, calls = 0 }
        let state = Mutex(State())

        func memberIds(roomId: String) async throws -> [String] {
            state.withLock { s in s.calls += 1; s.inFlight += 1; s.maxInFlight = max(s.maxInFlight, s.inFlight) }
            for _ in 0..<5 { await Task.yield() }
            state.withLock { $0.inFlight -= 1 }
            return ["member"]
        }

        func heartedBy(elementId: String) async throws -> Set<String> { [] }
        func rooms(roomId: String, viewers: [String]) async throws -> [String: Room] { [:] }
    }

    /// A burst of events (a fixture or an import of hundreds of elements) in one room: its events
    /// share their room's members read while it waits for its turn, at most `maxReadsInFlight`
    /// reads reach the database at once (unbounded, they filled its read queue, whose bound refused
    /// them and left their global events unsent), and every event still leaves, in commit order.
    func testABurstOfEventsKeepsItsReadsInFlightBoundedAndDeliversEveryOne() async throws {
        let hub = try SocketIOServer(configuration: SocketIOConfiguration(), clock: SystemClock(), logger: Logger(label: "test"))
        let log = RealtimeEventLog(capacity: 2_000)
        log.observe(hub)
        let reads = CountingReads()
        var configuration = RealtimeConfiguration(globalEvents: .members)
        configuration.maxReadsInFlight = 4
        let broadcaster = RealtimeBroadcaster(hub: hub, reads: reads, configuration: configuration,
                                              clock: SystemClock(), recovery: nil, logger: Logger(label: "test"))
        let burst = 400
        for i in 0..<burst {
            broadcaster.publish(DomainEvent(kind: .roomCleared(deleted: i), roomId: "r1", actorId: "a\(i)", originSocketId: nil))
        }
        await broadcaster.flush()

        let state = reads.state.withLock { $0 }
        XCTAssertGreaterThanOrEqual(state.calls, 1)
        XCTAssertLessThan(state.calls, burst / 10, "events published while their room's read waited for its turn shared it")
        XCTAssertLessThanOrEqual(state.maxInFlight, 4, "the reads in flight stay within maxReadsInFlight")
        let entries = log.events(since: 0, limit: 2_000).entries
        XCTAssertEqual(entries.filter { $0.event == "room:cleared:global" }.count, burst, "every event's global part sent")
        let order = entries.filter { $0.event == "room:cleared" }.compactMap { $0.args.first?["clearedBy"]?.stringValue }
        XCTAssertEqual(order, (0..<burst).map { "a\($0)" }, "in commit order")
    }
}
