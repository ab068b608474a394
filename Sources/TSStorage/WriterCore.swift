import Dispatch
import Logging
import TSSync

/// The single write connection, its queue, and the dedicated writer thread doing group commit.
///
/// `@unchecked Sendable` invariants:
/// - `connection` is used only while `connectionLock` is held (by the writer thread during a
///   batch, or by `writeSync`/writer-routed reads on the caller's thread). The lock is not
///   recursive: code that already holds the connection is handed it as an argument and uses it
///   directly (a migration applied inside the PostgreSQL advisory-lock scope, a read nested in a
///   write), and never goes back through `writeSync`/`withConnection`, which would deadlock.
/// - `queue`, `closing` and `stats` are read and written only while `queueCondition` is held.
final class WriterCore: @unchecked Sendable {
    let connection: SQLConnection
    let connectionLock = Mutex()
    private let queueCondition = Condition()
    private var queue: [any WriteJob] = []
    private var closing = false
    /// Set once, under `connectionLock`, by `closeConnection`.
    var connectionClosed = false
    private var stats = DatabaseStats()
    private let maxBatch: Int
    /// PostgreSQL: re-runs of a batch lost to a serialization failure, deadlock or lost connection.
    let maxRetries: Int
    /// PostgreSQL: reachability (nil for SQLite, whose path is unchanged).
    let monitor: ConnectionMonitor?
    let logger: Logger
    /// SQLite in WAL mode: the WAL's checkpoints (the writer restarts the WAL at its hard bound).
    let checkpointer: WALCheckpointer?
    // Written once in init before the core is shared; `join` is itself thread-safe.
    private var thread: SpawnedThread?

    init(connection: SQLConnection, maxBatch: Int, maxRetries: Int = 0, monitor: ConnectionMonitor? = nil,
         checkpointer: WALCheckpointer? = nil, logger: Logger) throws {
        self.connection = connection
        self.maxBatch = max(1, maxBatch)
        self.maxRetries = max(0, maxRetries)
        self.monitor = monitor
        self.checkpointer = checkpointer
        self.logger = logger
        thread = try SpawnedThread.spawn(name: monitor == nil ? "ts-sqlite-write" : "ts-pg-write", stackSize: 4 << 20) { [self] in self.runLoop() }
    }

    // MARK: - Queue

    /// Queues `job`; false when the database is closing.
    func enqueue(_ job: any WriteJob) -> Bool {
        queueCondition.lock()
        defer { queueCondition.unlock() }
        guard !closing else { return false }
        queue.append(job)
        queueCondition.signal()
        return true
    }

    var queueDepth: Int {
        queueCondition.lock()
        defer { queueCondition.unlock() }
        return queue.count
    }

    var statsSnapshot: DatabaseStats {
        queueCondition.lock()
        defer { queueCondition.unlock() }
        var s = stats
        s.writeQueueDepth = queue.count
        return s
    }

    func updateStats(_ update: (inout DatabaseStats) -> Void) {
        queueCondition.lock()
        update(&stats)
        queueCondition.unlock()
    }

    // MARK: - Writer thread

    private func runLoop() {
        while true {
            queueCondition.lock()
            while queue.isEmpty && !closing { queueCondition.wait() }
            if queue.isEmpty {  // closing and drained
                queueCondition.unlock()
                return
            }
            if queue[0].runsOutsideTransaction {
                let job = queue.removeFirst()
                queueCondition.unlock()
                runAlone(job)
                continue
            }
            // A batch stops before the next job that must run outside a transaction.
            var n = 1
            while n < min(maxBatch, queue.count) && !queue[n].runsOutsideTransaction { n += 1 }
            let batch = Array(queue.prefix(n))
            queue.removeFirst(n)
            queueCondition.unlock()
            runBatch(batch)
            if let checkpointer, checkpointer.needsRestart {
                // The batch's callers are answered; the next batch waits for the WAL to start over.
                connectionLock.withLock {
                    if !connectionClosed, let sqlite = connection.sqlite { checkpointer.restartIfDue(writer: sqlite) }
                }
            }
        }
    }

    /// A maintenance job (checkpoint, pruning bookkeeping): on the writer connection between
    /// batches, outside any transaction, so it never holds the write lock longer than it needs.
    private func runAlone(_ job: any WriteJob) {
        holdingConnection {
            if connectionClosed {
                job.fail(StorageError.misuse("database is closed"))
            } else if let monitor, let error = monitor.usabilityError(connection) {
                job.fail(error)
            } else {
                _ = job.execute(on: connection)
            }
        }
        job.complete()
    }

    /// Group commit: one `BEGIN IMMEDIATE`, each job in its own SAVEPOINT (a throwing job is
    /// rolled back alone), one `COMMIT`, and only then are callers resumed — so a caller that
    /// got a result knows its data is durable (per `synchronous`).
    private func runBatch(_ batch: [any WriteJob]) {
        if let monitor {
            runPostgresBatch(batch, monitor: monitor)
            return
        }
        let started = DispatchTime.now().uptimeNanoseconds
        var committed = 0
        var failed = 0
        var commitFailed = false
        holdingConnection {
            if connectionClosed {
                failed = failClosed(batch)
            } else {
                var inTransaction = false
                var succeededInTransaction: [any WriteJob] = []
                var index = 0
                while index < batch.count {
                    let job = batch[index]
                    if !inTransaction {
                        do {
                            try connection.executeControl("BEGIN IMMEDIATE")
                            inTransaction = true
                        } catch {
                            logger.error("sqlite writer: BEGIN failed", metadata: ["error": "\(error)"])
                            for rest in batch[index...] { rest.fail(error) }
                            failed += batch.count - index
                            commitFailed = true
                            break
                        }
                    }
                    if job.execute(on: connection) {
                        succeededInTransaction.append(job)
                    } else {
                        failed += 1
                    }
                    if !connection.isInTransaction {
                        // SQLite rolled back the whole transaction (SQLITE_FULL, IOERR, NOMEM, …, or a
                        // job that ran COMMIT/ROLLBACK itself): the earlier jobs' changes are gone.
                        let error = StorageError(code: 1, message: "the write transaction was rolled back by SQLite after an error in a job of the same batch")
                        for lost in succeededInTransaction { lost.fail(error) }
                        failed += succeededInTransaction.count
                        succeededInTransaction.removeAll()
                        inTransaction = false
                    }
                    index += 1
                }
                if inTransaction {
                    do {
                        try connection.executeControl("COMMIT")
                        committed = succeededInTransaction.count
                    } catch {
                        logger.error("sqlite writer: COMMIT failed", metadata: ["error": "\(error)", "jobs": "\(batch.count)"])
                        if connection.isInTransaction { try? connection.executeControl("ROLLBACK") }
                        for job in succeededInTransaction { job.fail(error) }
                        failed += succeededInTransaction.count
                        commitFailed = true
                    }
                }
            }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds &- started
        updateStats { s in
            s.lastTransactionNanoseconds = elapsed
            s.totalTransactionNanoseconds &+= elapsed
            s.lastBatchSize = batch.count
            if committed > 0 { s.transactionsCommitted += 1 }
            s.jobsCommitted += UInt64(committed)
            s.jobsFailed += UInt64(failed)
            if commitFailed { s.commitFailures += 1 }
        }
        // Resume callers only after COMMIT (or its failure).
        for job in batch { job.complete() }
    }

    /// Fails every job of `batch` because the connection is closed; returns how many.
    func failClosed(_ batch: [any WriteJob]) -> Int {
        let error = StorageError.misuse("database is closed")
        for job in batch { job.fail(error) }
        return batch.count
    }

    /// Runs `body` holding `connectionLock`, the connection allowed on this thread for as long
    /// (the debug-build scheduling check, SQLConnection+Watchdog.swift). Every job uses the
    /// connection inside one of these.
    func holdingConnection<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try connectionLock.withLock { () throws(E) -> T in try connection.allowed(body) }
    }

    // MARK: - Synchronous writes

    /// Runs `body` in its own transaction on the calling thread, holding the connection lock.
    func writeSync<T>(_ body: (SQLConnection) throws -> T) throws -> T {
        try holdingConnection { () throws -> T in
            guard !connectionClosed else { throw StorageError.misuse("database is closed") }
            if let monitor { try monitor.ensureUsable(connection) }
            let nested = connection.isInTransaction
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                let result = try connection.transaction { try body(connection) }
                if !nested, let checkpointer, checkpointer.needsRestart, let sqlite = connection.sqlite {
                    checkpointer.restartIfDue(writer: sqlite)
                }
                if !nested {
                    let elapsed = DispatchTime.now().uptimeNanoseconds &- started
                    updateStats { s in
                        s.lastTransactionNanoseconds = elapsed
                        s.totalTransactionNanoseconds &+= elapsed
                        s.transactionsCommitted += 1
                        s.jobsCommitted += 1
                    }
                }
                return result
            } catch {
                if !nested { updateStats { $0.jobsFailed += 1 } }
                throw error
            }
        }
    }

    /// Runs `body` with the writer connection, outside any transaction the caller did not open.
    func withConnection<T>(_ body: (SQLConnection) throws -> T) throws -> T {
        try holdingConnection { () throws -> T in
            guard !connectionClosed else { throw StorageError.misuse("database is closed") }
            return try body(connection)
        }
    }

    // MARK: - Shutdown

    /// Stops accepting writes and waits until the writer thread has run every queued job and
    /// exited. Idempotent. Must not be called from the writer thread (i.e. inside a job).
    func stopAndDrain() {
        queueCondition.lock()
        closing = true
        queueCondition.broadcast()
        queueCondition.unlock()
        thread?.join()  // idempotent: every (concurrent or later) caller gets through
    }

    /// Closes the writer connection (after `stopAndDrain`). Idempotent.
    func closeConnection() {
        connectionLock.withLock {
            if !connectionClosed {
                connectionClosed = true
                connection.close()
            }
        }
    }
}
