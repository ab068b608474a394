import Foundation
import Logging
import TSSync

/// The application's database: one writer connection on a dedicated thread with group commit,
/// and a pool of read-only connections, each on a dedicated reader thread.
///
/// - Writes (`write`) are queued to the writer thread, which commits up to
///   `maxWriteBatch` of them in one transaction (each job in its own SAVEPOINT) and resumes the
///   callers only after the COMMIT: a returned `write` is durable.
/// - Reads (`read`) are queued to the reader threads (`ReaderPool`); the caller suspends and is
///   resumed with the result, so an event loop never waits for a connection or a lock. Each read
///   runs inside a `BEGIN DEFERRED` snapshot; in WAL mode reads run concurrently with the writer
///   and see committed data only. At most `maxQueuedReads` reads wait for a reader; past that
///   `read` throws `DatabaseOverloadedError` (503).
/// - `readSync` blocks the calling thread instead: only for threads that may block (CLI,
///   migrations, seeding, tests), never an event loop or a request handler.
/// - `":memory:"` (and `readerCount == 0`): reads are routed through the writer connection
///   (under its lock, from one reader thread), so every caller sees the same in-memory database.
///
/// Rules for callers: a `write` job must not run `BEGIN`/`COMMIT`/`ROLLBACK` itself (use
/// `connection.transaction`/`savepoint`, which nest); a `read` body must not write; do not
/// call `close()` or `await` another `write` from inside a job (the writer thread would wait on itself).
///
/// `@unchecked Sendable` invariant: the writer connection is only touched through `core`
/// (which serializes it with a lock and its own thread); each reader connection is owned by one
/// reader thread of `pool`. Everything else is immutable.
public final class Database: @unchecked Sendable {
    public let path: String
    public let configuration: DatabaseConfiguration
    /// True when reads go through the writer connection (`:memory:` or `readerCount == 0`).
    public let routesReadsThroughWriter: Bool
    let logger: Logger
    private let core: WriterCore
    private let pool: ReaderPool

    /// Opens (creating if needed) the database at `path` with its writer thread and read pool.
    public init(path: String, configuration: DatabaseConfiguration = .init(),
                logger: Logger = Logger(label: "touchsync.storage")) throws {
        self.path = path
        self.configuration = configuration
        self.logger = logger
        let memory = Database.isMemoryPath(path)
        let writer = try SQLiteConnection(path: path, readOnly: false, configuration: configuration)
        if !memory {
            let mode = (try? writer.scalarString("PRAGMA journal_mode"))?.uppercased() ?? "?"
            if mode != configuration.journalMode.rawValue {
                logger.warning("sqlite: journal_mode is \(mode), wanted \(configuration.journalMode.rawValue)", metadata: ["path": "\(path)"])
            }
        }
        var readers: [SQLiteConnection] = []
        if !memory && configuration.readerCount > 0 {
            do {
                for _ in 0..<configuration.readerCount {
                    readers.append(try SQLiteConnection(path: path, readOnly: true, configuration: configuration))
                }
            } catch {
                readers.forEach { $0.close() }
                writer.close()
                throw error
            }
        }
        self.routesReadsThroughWriter = readers.isEmpty
        let core: WriterCore
        do {
            core = try WriterCore(connection: writer, maxBatch: configuration.maxWriteBatch, logger: logger)
        } catch {
            readers.forEach { $0.close() }
            writer.close()
            throw error
        }
        self.core = core
        do {
            pool = try ReaderPool(sources: readers.isEmpty ? [.writer(core)] : readers.map { .connection($0) },
                                  maxQueued: configuration.maxQueuedReads, logger: logger)
        } catch {
            readers.forEach { $0.close() }
            core.stopAndDrain()
            core.closeConnection()
            throw error
        }
        logger.debug("sqlite: opened", metadata: ["path": "\(path)", "readers": "\(readers.count)"])
    }

    deinit { close() }

    static func isMemoryPath(_ path: String) -> Bool {
        path == ":memory:" || path.isEmpty || (path.hasPrefix("file:") && (path.contains(":memory:") || path.contains("mode=memory")))
    }

    // MARK: - Reads

    /// Runs `body` on a reader thread, on a read-only connection inside a read transaction (one
    /// consistent snapshot for all its statements), and returns its result. The caller suspends
    /// meanwhile (it never blocks its thread); when every reader is busy the read waits in a
    /// FIFO queue of at most `maxQueuedReads`, past which it throws `DatabaseOverloadedError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = AsyncReadJob(body: body, continuation: continuation)
            switch pool.submit(job, bounded: true) {
            case .accepted: break
            case .full: continuation.resume(throwing: DatabaseOverloadedError(maxQueuedReads: pool.maxQueued))
            case .closed: continuation.resume(throwing: StorageError.misuse("database is closed"))
            }
        }
    }

    /// Runs `body` like `read` but BLOCKS the calling thread until it is done. Only for threads
    /// that may block: the CLI, migrations, seeding and tests; never an event loop or a request
    /// handler (use `read`). Not bounded by `maxQueuedReads`. On a `:memory:` database it runs on
    /// the calling thread through the writer connection (so it also works nested in `writeSync`).
    public func readSync<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if routesReadsThroughWriter {
            return try core.withConnection { connection in
                // Nested inside a write on this thread: read within that transaction.
                if connection.isInTransaction { return try body(connection) }
                try connection.executeScript("PRAGMA query_only = 1")
                defer { try? connection.executeScript("PRAGMA query_only = 0") }
                var value: T?
                try Database.snapshot(connection) { value = try body($0) }
                return value!
            }
        }
        // `body` does not escape: this call returns only after the job has run or failed.
        return try withoutActuallyEscaping(body) { escapable in
            let job = BlockingReadJob(body: escapable)
            switch pool.submit(job, bounded: false) {
            case .accepted: break
            case .full, .closed: throw StorageError.misuse("database is closed")
            }
            return try job.wait()
        }
    }

    static func snapshot(_ connection: SQLiteConnection, _ body: (SQLiteConnection) throws -> Void) throws {
        try connection.executeScript("BEGIN DEFERRED")
        do {
            try body(connection)
            try connection.executeScript("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.executeScript("ROLLBACK") }
            throw error
        }
    }

    // MARK: - Writes

    /// Queues `body` for the writer thread and returns its result once the transaction that
    /// contains it has COMMITted (durable). If `body` throws, only its own changes are rolled
    /// back (SAVEPOINT) and the error is rethrown here; if the COMMIT fails, every successful
    /// job of the batch gets the commit error.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = TypedWriteJob(body: body, continuation: continuation)
            if !core.enqueue(job) {
                continuation.resume(throwing: StorageError.misuse("database is closed"))
            }
        }
    }

    /// Runs `body` in its own `BEGIN IMMEDIATE` transaction on the calling thread (blocking),
    /// serialized with the writer thread. For the CLI, migrations, tests and seeding.
    @discardableResult
    public func writeSync<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try core.writeSync(body)
    }

    /// Runs `body` with the writer connection outside any transaction (blocking, serialized with
    /// the writer thread). For statements that cannot run in a transaction (`VACUUM`,
    /// `PRAGMA wal_checkpoint`) and for `Migrator`'s bookkeeping.
    public func withWriterConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try core.withConnection(body)
    }

    /// Runs `body` on the writer thread between group commits, alone and outside any
    /// transaction (it may open its own, e.g. with `connection.transaction`). For background
    /// maintenance: WAL checkpoints and batched pruning, which must neither block an event loop
    /// nor hold the write lock for long. Durable like `write` once it returns.
    @discardableResult
    public func maintenance<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = TypedWriteJob(body: body, continuation: continuation, outsideTransaction: true)
            if !core.enqueue(job) {
                continuation.resume(throwing: StorageError.misuse("database is closed"))
            }
        }
    }

    /// What one `PRAGMA wal_checkpoint` did (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
    public struct CheckpointResult: Sendable, Equatable {
        /// True when a reader's snapshot kept the checkpoint from completing (it then did what it could).
        public var busy: Bool
        /// Frames in the WAL before the checkpoint (-1 when not in WAL mode).
        public var walFrames: Int64
        /// Frames copied back into the database file.
        public var checkpointedFrames: Int64
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)` on the writer thread, between group commits: copies the
    /// WAL into the database file and truncates the WAL to zero bytes. It never waits for readers
    /// (the busy handler is off while it runs): when a read still uses the WAL it checkpoints what
    /// it can, like PASSIVE, and reports `busy`; the next one finishes the job.
    @discardableResult
    public func checkpoint() async throws -> CheckpointResult {
        let busyTimeout = configuration.busyTimeoutMilliseconds
        return try await maintenance { c in
            try c.executeScript("PRAGMA busy_timeout = 0")
            defer { try? c.executeScript("PRAGMA busy_timeout = \(busyTimeout)") }
            return try c.first("PRAGMA wal_checkpoint(TRUNCATE)") {
                CheckpointResult(busy: $0.int(0) != 0, walFrames: $0.int(1), checkpointedFrames: $0.int(2))
            } ?? CheckpointResult(busy: false, walFrames: -1, checkpointedFrames: -1)
        }
    }

    // MARK: - Metrics

    /// Jobs queued for the writer thread and not yet started.
    public var writeQueueDepth: Int { core.queueDepth }
    /// Duration of the most recent write transaction.
    public var lastTransactionNanoseconds: UInt64 { core.statsSnapshot.lastTransactionNanoseconds }
    public var stats: DatabaseStats { core.statsSnapshot }

    /// The read pool right now: readers busy, reads waiting, reads refused and done so far.
    public var readPool: (readers: Int, busy: Int, queued: Int, rejected: UInt64, completed: UInt64) {
        let s = pool.snapshot
        return (pool.size, s.readersBusy, s.queued, s.rejected, s.completed)
    }

    /// Liveness probe for `/health`, which must answer promptly whatever the reads are doing:
    /// `SELECT 1` on a reader when one is idle; when every reader is busy the pool is working, so
    /// the answer is `.busy` without queueing behind them.
    public func health() async -> Health {
        guard pool.hasIdleReader else { return .busy }
        do { return try await read { try $0.scalarInt("SELECT 1") } == 1 ? .ok : .failed } catch is DatabaseOverloadedError {
            return .busy
        } catch {
            return .failed
        }
    }

    public enum Health: Sendable { case ok, busy, failed }

    /// `health() != .failed`.
    public func ping() async -> Bool { await health() != .failed }

    // MARK: - Shutdown

    /// Refuses new writes, finishes (commits) every queued write, lets every queued read finish,
    /// then closes all connections. Idempotent; blocks until the writer and reader threads are done.
    public func close() {
        core.stopAndDrain()
        pool.close()
        // The writer closes last: as the last connection it checkpoints and removes the WAL.
        core.closeConnection()
    }
}
