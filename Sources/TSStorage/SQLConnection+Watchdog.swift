#if DEBUG
import Foundation  // Thread.current: the identity of the calling thread
#endif
import TSSync

// The scheduling watchdog (debug builds): a connection that `Database` owns may run statements
// only on the thread of the job that holds it, modelled on GRDB's `SchedulingWatchdog`
// (GRDB/Core/SchedulingWatchdog.swift), which allows a database connection on the dispatch queue
// that runs its jobs and traps anywhere else.
//
// Here every job gets its connection inside `allowed` (WriterCore: a write batch, a maintenance
// job, `writeSync`, `withWriterConnection`; ReaderPool: each read), which marks the connection
// as held by the calling thread for the job's duration; every statement run through
// `SQLConnection` (`run`, `rows`, `forEachRow`, `first`, `executeScript`, `transaction`,
// `savepoint`, `prepare`, `prefetch`) first checks that the calling thread holds it. What that
// catches: a connection kept past its job (stored, or captured by an escaping closure or a `Task`)
// and used later or from another thread, while the thread that owns it may use it too.
//
// What it cannot see: statements stepped on a `Statement` from `prepare` after the check, and code
// that reaches the engine connection (`sqlite`) directly: the checkpointer and backups own their
// connections. Connections not opened by a `Database` (a test's own `SQLConnection`) are not
// checked. Release builds compile none of this: `allowed` calls its body and the check is empty.

#if DEBUG
/// Which thread holds one connection right now (debug builds). `guarded` is set once by `Database`
/// before the connection is handed to its writer or reader thread.
final class ConnectionWatchdog: Sendable {
    private struct State {
        var guarded = false
        var holder: ObjectIdentifier?
        var depth = 0
    }

    private let state = Mutex(State())

    /// Statements from now on must run inside a job that holds the connection.
    func guardJobs() { state.withLock { $0.guarded = true } }

    /// The calling thread holds the connection until the matching `leave` (nests on one thread).
    /// False (after reporting the misuse) when another thread's job holds it: then there is
    /// nothing to leave.
    func enter() -> Bool {
        let me = ConnectionWatchdog.currentThread
        let entered = state.withLock { s -> Bool in
            if let holder = s.holder, holder != me { return false }
            s.holder = me
            s.depth += 1
            return true
        }
        if !entered { ConnectionWatchdog.reportMisuse("a job took a connection that another thread's job holds") }
        return entered
    }

    func leave() {
        state.withLock { s in
            s.depth -= 1
            if s.depth <= 0 {
                s.depth = 0
                s.holder = nil
            }
        }
    }

    /// True when the calling thread may run statements on the connection.
    var allowsCurrentThread: Bool {
        let me = ConnectionWatchdog.currentThread
        return state.withLock { !$0.guarded || $0.holder == me }
    }

    static var currentThread: ObjectIdentifier { ObjectIdentifier(Thread.current) }

    /// Where a misuse goes instead of `preconditionFailure`: tests that provoke one on purpose set
    /// it (a trap cannot be caught in the test process); nil otherwise.
    static let misuseHandler = Mutex<(@Sendable (String) -> Void)?>(nil)

    static func reportMisuse(_ message: String) {
        let message = "SQLConnection misuse: \(message) (debug-build scheduling check, SQLConnection+Watchdog.swift)"
        if let handler = misuseHandler.withLock({ $0 }) {
            handler(message)
        } else {
            preconditionFailure(message)
        }
    }
}
#endif

extension SQLConnection {
    /// Runs `body` with this connection held by the calling thread (a job's whole run).
    @inline(__always)
    func allowed<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        #if DEBUG
        let entered = watchdog.enter()
        defer { if entered { watchdog.leave() } }
        #endif
        return try body()
    }

    /// From now on statements run only inside a job that holds this connection (`allowed`).
    func restrictToJobs() {
        #if DEBUG
        watchdog.guardJobs()
        #endif
    }

    /// True when the calling thread may run a statement on this connection now: the connection is
    /// not `Database`'s, or the caller is inside the job that holds it. Always true in release builds.
    var isAllowedHere: Bool {
        #if DEBUG
        return watchdog.allowsCurrentThread
        #else
        return true
        #endif
    }

    /// The check before each statement: traps (debug builds) when the calling thread does not hold
    /// the connection.
    @inline(__always)
    func checkScheduling(_ sql: @autoclosure () -> String) {
        #if DEBUG
        if !watchdog.allowsCurrentThread {
            ConnectionWatchdog.reportMisuse("a statement ran on a database connection outside the job that holds it: \(sql())")
        }
        #endif
    }
}
