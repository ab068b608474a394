/// A dedicated OS thread (pthread) running one closure: the one way the server starts a thread.
/// For work that must not run on an event loop or in the Swift concurrency pool because it
/// blocks or owns a resource for its whole life: the event loops themselves, the database writer,
/// readers and reconnection thread, a DNS lookup, an event-loop group's shutdown.
///
/// Every thread has a name of at most 15 bytes (Linux's limit for `pthread_setname_np`, the
/// `comm` shown by `top -H`, `ps -L`, `perf` and `/proc/PID/task/*/comm`; a longer name is a
/// programming error). The thread names itself before running the body: Darwin can only name the
/// calling thread, and doing it from inside on both systems keeps one path.
///
/// `spawn` returns a joinable thread (`join()` waits for it and releases it); `detach` starts one
/// that nobody waits for (its resources go back to the system when the body returns), for
/// short-lived work that reports through a continuation or an event loop.
// @unchecked Sendable: `thread` is written once in `init` before the value is shared; `joined`
// lives in a Mutex.
public final class SpawnedThread: @unchecked Sendable {
    private let thread: pthread_t
    private let joined = Mutex(false)
    public let name: String

    private init(thread: pthread_t, name: String) {
        self.thread = thread
        self.name = name
    }

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Linux's limit for a thread name, without the terminating NUL.
    public static let maximumNameLength = 15

    /// Starts `body` on a new joinable thread called `name` (at most 15 bytes) with a stack of
    /// `stackSize` bytes. Fails only when the system refuses a thread (`pthread_create`'s error).
    public static func spawn(name: String, stackSize: Int = 4 << 20, _ body: @escaping @Sendable () -> Void) throws -> SpawnedThread {
        SpawnedThread(thread: try start(name: name, stackSize: stackSize, detached: false, body), name: name)
    }

    /// Starts `body` on a new detached thread called `name` (at most 15 bytes): nobody joins it.
    public static func detach(name: String, stackSize: Int = 256 << 10, _ body: @escaping @Sendable () -> Void) throws {
        _ = try start(name: name, stackSize: stackSize, detached: true, body)
    }

    private static func start(name: String, stackSize: Int, detached: Bool, _ body: @escaping @Sendable () -> Void) throws -> pthread_t {
        precondition(!name.isEmpty && name.utf8.count <= maximumNameLength,
                     "thread name \"\(name)\" must be 1 to \(maximumNameLength) bytes (Linux's limit)")
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        let (rc, tid) = platformThreadCreate(stackSize: max(stackSize, 64 << 10), detached: detached, argument: start) { raw in
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            platformNameCurrentThread(start.name)
            start.body()
        }
        guard rc == 0, let tid else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SpawnError(code: rc)
        }
        return tid
    }

    /// True when called on this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits until the thread's closure has returned. Idempotent; never call it from the thread
    /// itself, nor from an event loop or a Swift concurrency task (it blocks).
    public func join() {
        precondition(!isCurrent, "thread \(name) cannot join itself")
        joined.withLock { joined in
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
