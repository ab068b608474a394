
/// A pthread mutex with a condition variable: the one wait/notify primitive of every layer that
/// runs its own threads (the database writer and reader threads, the reconnection thread, a
/// thread waiting for an event loop to start or to run a task). It is home-made because the
/// standard library's `Mutex` has no condition variable: a thread that must sleep until another
/// changes a state needs `pthread_cond_wait`, which atomically releases the mutex it waits under.
/// Never wait on one from an event loop or from a Swift concurrency task: wait only on threads
/// that may block (`SpawnedThread`s, the CLI's main thread), and hand results back to tasks
/// through continuations.
// @unchecked Sendable: the mutex and condition are the synchronisation primitives themselves;
// their storage is heap allocated once, never moved, and destroyed only in deinit.
public final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Atomically unlocks, sleeps until signalled (or spuriously woken), and locks again.
    /// Call with the lock held, in a loop that re-checks the awaited state.
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// Like `wait()`, but gives up after `timeout` (measured on the realtime clock, which
    /// `pthread_cond_timedwait` uses everywhere). Returns false when the time ran out. Call with the
    /// lock held, in a loop that re-checks the awaited state (a wake-up may be spurious).
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let c = timeout.components
        let totalNanos = Int64(now.tv_nsec) + c.attoseconds / 1_000_000_000
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + Int(c.seconds) + Int(totalNanos / 1_000_000_000)
        deadline.tv_nsec = Int(totalNanos % 1_000_000_000)
        return pthread_cond_timedwait(cond, mutex, &deadline) == 0
    }

    /// Wakes one waiter. Call with the lock held.
    public func signal() { pthread_cond_signal(cond) }

    /// Wakes every waiter. Call with the lock held.
    public func broadcast() { pthread_cond_broadcast(cond) }

    /// Locks, waits until `ready()` holds (re-checked after every wake-up), and unlocks.
    public func wait(until ready: () -> Bool) {
        pthread_mutex_lock(mutex)
        while !ready() { pthread_cond_wait(cond, mutex) }
        pthread_mutex_unlock(mutex)
    }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
