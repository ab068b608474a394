#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex. Used for short critical sections only.
public final class Lock: @unchecked Sendable {
    // Invariant: the mutex is initialised once and destroyed in deinit; pthread mutexes are
    // designed to be shared between threads.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lockRaw()
        defer { unlockRaw() }
        return try body()
    }

    @usableFromInline func lockRaw() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlockRaw() { pthread_mutex_unlock(mutex) }
}
