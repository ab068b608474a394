
/// A pthread mutex, the one lock type of every layer (Foundation-free, so usable from the bottom up).
/// `recursive: true` lets the thread that holds it lock it again (balanced by as many unlocks): for
/// a resource whose owner may call back into itself, such as the SQLite writer connection (a
/// `readSync` nested in a `writeSync` on the same thread).
///
/// One heap allocation: the mutex lives in the tail of its storage object (`ManagedBuffer`), not
/// in a second allocation beside it (a lock per connection or session adds up). Copies of a `Lock`
/// share that storage: it is one lock, like a class reference.
// @unchecked Sendable: the only state is the mutex, the synchronisation primitive itself; it is
// initialised before the storage is shared, never moved (tail-allocated in the object), and
// destroyed only in deinit. (`ManagedBuffer` is marked non-Sendable, so the struct says it.)
public struct Lock: @unchecked Sendable {
    private final class Storage: ManagedBuffer<Void, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    public init(recursive: Bool = false) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in () }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            var attr = pthread_mutexattr_t()
            pthread_mutexattr_init(&attr)
            if recursive { pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE)) }
            pthread_mutex_init(mutex, &attr)
            pthread_mutexattr_destroy(&attr)
        }
    }

    public func lock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) } }
    public func unlock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) } }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try storage.withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body()
        }
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
