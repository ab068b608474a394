
/// A pthread mutex, the one lock type of every layer (Foundation-free, so usable from the bottom up).
/// `recursive: true` lets the thread that holds it lock it again (balanced by as many unlocks): for
/// a resource whose owner may call back into itself, such as the SQLite writer connection (a
/// `readSync` nested in a `writeSync` on the same thread).
// @unchecked Sendable: the mutex itself is the synchronisation primitive; its storage is heap
// allocated once and never moved.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attr = pthread_mutexattr_t()
        pthread_mutexattr_init(&attr)
        if recursive { pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        pthread_mutex_init(mutex, &attr)
        pthread_mutexattr_destroy(&attr)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value protected by a `Lock`.
// @unchecked Sendable: `value` is only accessed inside `withLock`.
public final class LockedValue<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
    public var current: Value { lock.withLock { value } }
}
