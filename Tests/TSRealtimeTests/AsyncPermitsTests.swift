import Synchronization
import TSSync
import XCTest

final class AsyncPermitsTests: XCTestCase {
    /// A value shared with the tasks of a test.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    /// Never more bodies at once than permits, every body runs, and every permit comes back.
    func testAtMostCountBodiesRunAtOnceAndAllRun() async {
        let permits = AsyncPermits(3)
        let counts = Shared((inFlight: 0, max: 0, done: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    await permits.withPermit {
                        counts.value.withLock { $0.inFlight += 1; $0.max = max($0.max, $0.inFlight) }
                        for _ in 0..<3 { await Task.yield() }
                        counts.value.withLock { $0.inFlight -= 1; $0.done += 1 }
                    }
                }
            }
        }
        let c = counts.value.withLock { $0 }
        XCTAssertEqual(c.done, 200)
        XCTAssertLessThanOrEqual(c.max, 3)
        XCTAssertEqual(permits.available, 3, "every permit returned")
    }

    /// Waiters get their permit in arrival order.
    func testWaitersAreServedInArrivalOrder() async {
        let permits = AsyncPermits(1)
        let order = Shared([Int]())
        let (holding, held) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let holder = Task {
            await permits.withPermit {
                held.yield()
                for await _ in released { break }
            }
        }
        for await _ in holding { break }
        var waiters: [Task<Void, Never>] = []
        for i in 0..<5 {
            waiters.append(Task { await permits.withPermit { order.value.withLock { $0.append(i) } } })
            // The next waiter queues only after this one did: wait until it is parked.
            while permits.queued < i + 1 { await Task.yield() }
        }
        release.yield()
        await holder.value
        for w in waiters { await w.value }
        XCTAssertEqual(order.value.withLock { $0 }, [0, 1, 2, 3, 4])
    }
}
