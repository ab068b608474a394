import Dispatch
import TSJSON
import TSRealtime
import TSSocketIO
import TSTestSupport
import XCTest

/// The log's long-poll: a waiter is resumed by the next record or by its timer, exactly once,
/// and the number of waiters is bounded.
final class RealtimeEventLogWaitingTests: XCTestCase {
    func record(_ log: RealtimeEventLog) {
        log.record(SocketIOEmitRecord(event: "e", args: [.object([:])], target: .room("room:r"), except: nil, recipients: 0))
    }

    /// Waits until `condition` holds (TSTestSupport's `until`); fails after 5 s.
    func waitUntil(_ what: String, _ condition: () -> Bool) async {
        if !(await until(timeout: .seconds(5), condition)) { XCTFail("timed out waiting until \(what)") }
    }

    func testAWaiterIsResumedByTheNextRecordAndTheBoundRefusesOneMore() async {
        let log = RealtimeEventLog(capacity: 10, maxWaiters: 1)
        record(log)
        let waiting = Task { await log.waitForEvent(after: 1, timeoutMilliseconds: 20_000) }
        await waitUntil("the first request waits") { log.waiterCount == 1 }
        let refused = await log.waitForEvent(after: 1, timeoutMilliseconds: 20_000)
        XCTAssertEqual(refused, .tooManyWaiters, "past maxWaiters a request is refused, not queued")
        let started = DispatchTime.now().uptimeNanoseconds
        record(log)
        let outcome = await waiting.value
        XCTAssertEqual(outcome, .appended)
        XCTAssertLessThan(DispatchTime.now().uptimeNanoseconds - started, 5_000_000_000, "resumed by the record, not by its 20 s timer")
        XCTAssertEqual(log.waiterCount, 0)
    }

    func testAnEventAlreadyThereAnswersAtOnceAndAWaitRunsOut() async {
        let log = RealtimeEventLog(capacity: 10)
        record(log)
        let immediate = await log.waitForEvent(after: 0, timeoutMilliseconds: 20_000)
        XCTAssertEqual(immediate, .appended)
        let timedOut = await log.waitForEvent(after: 1, timeoutMilliseconds: 30)
        XCTAssertEqual(timedOut, .timedOut)
        XCTAssertEqual(log.waiterCount, 0, "the timer removed its waiter")
        record(log)  // nothing left to resume: a record after a timeout must not resume twice
        XCTAssertEqual(log.events(since: 0, limit: 10).lastSequence, 2)
    }
}
