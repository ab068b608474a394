#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setstacksize(&attr, max(stackSize, 64 << 10))
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        #if canImport(Glibc)
        var tid = pthread_t()
        #else
        var tid: pthread_t? = nil
        #endif
        let rc = pthread_create(&tid, &attr, { raw in
            // (Glibc's module map does not export pthread_setname_np, so the OS thread keeps the
            // process name; `name` is for logs and debugging.)
            #if canImport(Glibc)
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            #else
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            #endif
            start.body()
            return nil
        }, start)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SpawnError(code: rc)
        }
        #if canImport(Glibc)
        return SpawnedThread(thread: tid, name: name)
        #else
        return SpawnedThread(thread: tid!, name: name)
        #endif
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
