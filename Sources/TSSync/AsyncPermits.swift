import Synchronization

/// A fixed number of permits for async work: `withPermit` runs its body once a permit is free,
/// waiting in arrival order (FIFO) while none is. It bounds how many of a kind of operation are in
/// flight at once, so a burst queues here, in memory its callers already hold, rather than in a
/// shared resource whose own bound refuses the excess (a database's read queue).
///
/// Not cancellable: a waiter waits for its permit (the callers are tasks that must finish).
public final class AsyncPermits: Sendable {
    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0  // waiters before it were resumed; compacted when it passes half the array
    }

    private let state: Mutex<State>

    public init(_ count: Int) {
        precondition(count > 0, "AsyncPermits needs at least one permit")
        state = Mutex(State(free: count))
    }

    /// Permits free now, and callers waiting for one (for tests and metrics).
    public var available: Int { state.withLock { $0.free } }
    public var queued: Int { state.withLock { $0.waiters.count - $0.head } }

    public func withPermit<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        if state.withLock({ s in
            guard s.free > 0 else { return false }
            s.free -= 1
            return true
        }) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            // Checked again under the lock: a release between the two looks left a permit free.
            let now = state.withLock { s -> Bool in
                if s.free > 0 { s.free -= 1; return true }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    private func release() {
        // A waiting task takes the permit over directly (it never becomes free in between).
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard s.head < s.waiters.count else { s.free += 1; return nil }
            let c = s.waiters[s.head]
            s.head += 1
            if s.head == s.waiters.count {
                s.waiters.removeAll(keepingCapacity: true)
                s.head = 0
            } else if s.head * 2 > s.waiters.count {
                s.waiters.removeFirst(s.head)
                s.head = 0
            }
            return c
        }
        next?.resume()
    }
}
