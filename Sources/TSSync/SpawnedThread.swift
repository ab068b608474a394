
/// A dedicated OS thread (pthread) running one closure, for work that must not run on an event
/// loop or in the Swift concurrency pool because it blocks: the SQLite writer and readers.
/// `join()` waits for it to finish.
// @unchecked Sendable: `thread` is written once in `spawn` before the value is shared, and
// `joined` only under `lock`.
public final class SpawnedThread: @unchecked Sendable {
    private var thread: pthread_t
    private let lock = Lock()
    private var joined = false
    public let name: String

    private init(thread: pthread_t, name: String) {
        self.thread = thread
        self.name = name
    }

    private final class Start {
        let body: () -> Void
        init(body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread called `name` with a stack of
    /// `stackSize` bytes. Fails only when the system refuses a thread (`pthread_create`'s error).
    public static func spawn(name: String, stackSize: Int = 4 << 20, _ body: @escaping @Sendable () -> Void) throws -> SpawnedThread {
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        let (rc, tid) = platformThreadCreate(stackSize: max(stackSize, 64 << 10), argument: start) { raw in
            Unmanaged<Start>.fromOpaque(raw).takeRetainedValue().body()
        }
        guard rc == 0, let tid else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SpawnError(code: rc)
        }
        return SpawnedThread(thread: tid, name: name)
    }

    /// Waits until the thread's closure has returned. Idempotent; never call it from the thread itself.
    public func join() {
        lock.withLock {
            guard !joined else { return }
            pthread_join(thread, nil)
            joined = true
        }
    }

    /// `pthread_create` failed with `code` (EAGAIN: thread limit, ENOMEM).
    public struct SpawnError: Error, CustomStringConvertible, Sendable {
        public let code: Int32
        public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }
}
