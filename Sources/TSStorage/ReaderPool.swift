import Logging
import TSSync

/// The read side of `Database`: one dedicated thread per read connection (GRDB's
/// `DatabasePool` model, where each reader is a serialized queue of its own) taking jobs from one
/// bounded FIFO queue. Callers never wait on a lock here: `submit` only appends under a short
/// lock and returns; the caller suspends on a continuation (`Database.read`) and is resumed by
/// the reader thread when its read is done.
///
/// - The queue holds reads that are waiting for a free reader; at most `maxQueued` of them
///   (`database.maxQueuedReads`). Past it `submit` refuses (`DatabaseOverloadedError`, 503 over
///   HTTP) instead of letting a backlog grow without bound.
/// - For `:memory:` (or no reader connections) there is one reader thread, which runs each read
///   on the writer connection under the writer's lock with `PRAGMA query_only`.
///
/// `@unchecked Sendable` invariant: `queue`, `head`, `idle`, `closing` and the counters are only
/// touched with `condition` locked; each connection is used only by the one thread it was
/// given to; `threads` is written in `init` before the pool is shared and read in `close`.
final class ReaderPool: @unchecked Sendable {
    enum Source {
        /// A read-only connection owned by one reader thread.
        case connection(SQLConnection)
        /// The writer connection, borrowed under its lock (`:memory:` databases).
        case writer(WriterCore)
    }

    enum Admission { case accepted, full, closed }

    private let condition = Condition()
    private var queue: [(any ReadJob)?] = []
    private var head = 0
    private var idle = 0
    private var closing = false
    private var rejected: UInt64 = 0
    private var completed: UInt64 = 0
    private var threads: [SpawnedThread] = []
    private let owned: [SQLConnection]
    private let logger: Logger
    /// PostgreSQL: reachability, reconnection of a reader's broken connection.
    private let monitor: ConnectionMonitor?
    /// Reads allowed to wait for a reader (`database.maxQueuedReads`).
    let maxQueued: Int
    /// Reader threads.
    let size: Int

    init(sources: [Source], maxQueued: Int, monitor: ConnectionMonitor? = nil, logger: Logger) throws {
        self.monitor = monitor
        self.maxQueued = max(1, maxQueued)
        self.size = sources.count
        self.logger = logger
        owned = sources.compactMap { if case .connection(let c) = $0 { return c } else { return nil } }
        idle = sources.count
        for (index, source) in sources.enumerated() {
            // Each thread owns its source; the box only carries it across the spawn.
            let box = SourceBox(source)
            do {
                threads.append(try SpawnedThread.spawn(name: monitor == nil ? "ts-sql-rd\(index)" : "ts-pg-rd\(index)") { [self] in self.workerLoop(box.source) })
            } catch {
                close()
                throw error
            }
        }
    }

    /// Moves a `Source` (not Sendable: it holds a connection) to the thread that will own it.
    // @unchecked Sendable: the box is created on the spawning thread and then only read by the
    // spawned thread; the spawning thread never touches the source again.
    private final class SourceBox: @unchecked Sendable {
        let source: Source
        init(_ source: Source) { self.source = source }
    }

    // MARK: - Submitting

    /// Queues `job`. `bounded` applies `maxQueued` (the async path); blocking callers (CLI,
    /// migrations) are never refused.
    func submit(_ job: any ReadJob, bounded: Bool) -> Admission {
        condition.lock()
        if closing { condition.unlock(); return .closed }
        let waiting = queue.count - head
        // Counting an idle reader as room: a job that finds a free reader never waits.
        if bounded && waiting >= maxQueued + idle {
            rejected &+= 1
            let total = rejected
            condition.unlock()
            // The first refusal, then one line per 1000: explains the 503s without flooding the log.
            if total == 1 || total % 1000 == 0 {
                logger.warning("sqlite: read refused, \(waiting) reads already wait for \(size) busy readers (database.maxQueuedReads = \(maxQueued)); \(total) refused so far")
            }
            return .full
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
        return .accepted
    }

    /// True when some reader is idle right now (so a read would start at once).
    var hasIdleReader: Bool { condition.withLock { idle > 0 && queue.count == head } }

    struct Snapshot: Sendable {
        var readersBusy: Int
        var queued: Int
        var rejected: UInt64
        var completed: UInt64
    }

    var snapshot: Snapshot {
        condition.withLock { Snapshot(readersBusy: size - idle, queued: queue.count - head, rejected: rejected, completed: completed) }
    }

    // MARK: - Reader threads

    private func workerLoop(_ source: Source) {
        while true {
            condition.lock()
            while queue.count == head && !closing { condition.wait() }
            if queue.count == head {  // closing, and every queued read has been taken
                condition.unlock()
                return
            }
            let job = queue[head]!
            queue[head] = nil
            head += 1
            if head >= 64 && head * 2 >= queue.count {  // compact the consumed prefix now and then
                queue.removeFirst(head)
                head = 0
            }
            idle -= 1
            condition.unlock()

            execute(job, on: source)

            condition.lock()
            idle += 1
            completed &+= 1
            condition.unlock()
        }
    }

    private func execute(_ job: any ReadJob, on source: Source) {
        switch source {
        case .connection(let connection):
            // The read holds its connection for its run (the debug-build scheduling check).
            connection.allowed {
                if let monitor {
                    job.run(on: connection, snapshot: monitor.resilientSnapshot)
                } else {
                    job.run(on: connection, snapshot: Database.snapshot)
                }
            }
        case .writer(let core):
            var ran = false
            do {
                try core.withConnection { connection in
                    try connection.executeScript("PRAGMA query_only = 1")
                    defer { try? connection.executeScript("PRAGMA query_only = 0") }
                    ran = true
                    job.run(on: connection, snapshot: Database.snapshot)
                }
            } catch {
                if !ran { job.fail(error) }
            }
        }
    }

    // MARK: - Shutdown

    /// Refuses new reads, lets the reader threads finish every queued read, joins them and closes
    /// their connections. Idempotent. Never call it from a reader thread (inside a read).
    func close() {
        condition.withLock {
            closing = true
            condition.broadcast()
        }
        for thread in threads { thread.join() }
        owned.forEach { $0.close() }
    }
}

/// `Database.read` was refused because `database.maxQueuedReads` reads are already waiting for a
/// reader connection: the server is overloaded (HTTP 503 with `Retry-After`).
public struct DatabaseOverloadedError: Error, CustomStringConvertible, Sendable {
    /// The bound that was reached (`database.maxQueuedReads`).
    public let maxQueuedReads: Int
    public var description: String { "database overloaded: \(maxQueuedReads) reads are already waiting for a reader connection" }
}
