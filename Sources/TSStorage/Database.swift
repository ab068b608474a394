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
/// A `write` job's body must only touch the database (no events emitted, no counters bumped, no
/// I/O): on PostgreSQL a batch lost to a serialization failure, a deadlock or a lost connection is
/// rolled back and its jobs run again (`database.maxWriteRetries`), so a body may run more than
/// once; only its last, committed run counts. Do side effects after `write` returns.
///
/// PostgreSQL (`init(url:)`, docs/storage-postgres.md): the same shape over libpq — one writer
/// connection on the writer thread, `readerCount` reader connections on reader threads, every
/// blocking libpq call on those threads. While the server is unreachable, `read`/`write` throw
/// `DatabaseUnavailableError` at once (HTTP 503) and `health()` is `.failed` with
/// `unavailableReason`; a background thread reconnects with exponential backoff.
///
/// `@unchecked Sendable` invariant: the writer connection is only touched through `core`
/// (which serializes it with a lock and its own thread); each reader connection is owned by one
/// reader thread of `pool`. Everything else is immutable.
public final class Database: @unchecked Sendable {
    /// The SQLite file (or `:memory:`); for PostgreSQL the URL with its password redacted.
    public let path: String
    public let configuration: DatabaseConfiguration
    /// The backend's SQL dialect (`.sqlite` unless opened with a `postgres://` URL).
    public let dialect: SQLDialect
    /// True when reads go through the writer connection (`:memory:` or `readerCount == 0`).
    public let routesReadsThroughWriter: Bool
    let logger: Logger
    private let core: WriterCore
    private let pool: ReaderPool
    /// PostgreSQL only: reachability and the reconnection loop.
    let monitor: ConnectionMonitor?
    /// SQLite file databases in WAL mode: checkpoints off the writer's path, the WAL's hard bound.
    private let checkpointer: WALCheckpointer?
    /// PostgreSQL only: the round trips every connection of this database waited for (0 on SQLite).
    public let postgresRoundTrips = PostgresRoundTrips()
    /// When `health()` last saw `SELECT 1` succeed (monotonic nanoseconds; 0: not recently).
    private let lastHealthyPing = Atomic<UInt64>(0)
    /// Set by `close()`: `health()` fails from then on without a round trip.
    private let closed = Atomic<Bool>(false)

    /// Opens the database `url` names: `postgres://user:pass@host:port/db` (or `postgresql://`)
    /// for PostgreSQL; `sqlite:PATH` or a plain path for SQLite. PostgreSQL gets one writer
    /// connection and `max(1, readerCount)` reader connections, each on its own thread; start-up
    /// keeps trying an unreachable server for `startupWait`. On a build without libpq (macOS) a
    /// PostgreSQL URL throws `StorageError` "this build has no PostgreSQL support".
    public convenience init(url: String, configuration: DatabaseConfiguration = .init(),
                            logger: Logger = Logger(label: "touchsync.storage")) throws {
        guard PostgresURL.isPostgres(url) else {
            try self.init(path: url.hasPrefix("sqlite:") ? String(url.dropFirst("sqlite:".count)) : url,
                          configuration: configuration, logger: logger)
            return
        }
        try self.init(postgresURL: url, configuration: configuration, logger: logger)
    }

    /// `count` reader connections from `open`. When one cannot be opened, those already open and
    /// the writer (`closeWriter`) are closed before the error goes up: a database that fails to
    /// open leaves no connection behind.
    static func openReaders(_ count: Int, orClose closeWriter: () -> Void,
                            _ open: () throws -> SQLConnection) throws -> [SQLConnection] {
        var readers: [SQLConnection] = []
        do {
            for _ in 0..<count { readers.append(try open()) }
            return readers
        } catch {
            readers.forEach { $0.close() }
            closeWriter()
            throw error
        }
    }

    /// The engine-neutral part of opening, after an engine's initializer (`Database+SQLite.swift`,
    /// `Database+Postgres.swift`) has opened its connections: the writer thread and the read pool.
    /// On failure every connection given is closed.
    init(path: String, dialect: SQLDialect, writer: SQLConnection, readers: [SQLConnection], monitor: ConnectionMonitor?,
         checkpointer: WALCheckpointer? = nil, configuration: DatabaseConfiguration, logger: Logger) throws {
        self.path = path
        self.dialect = dialect
        self.configuration = configuration
        self.logger = logger
        self.monitor = monitor
        self.checkpointer = checkpointer
        self.routesReadsThroughWriter = readers.isEmpty
        // Before the threads start: from here on only the job that holds a connection may use it.
        writer.restrictToJobs()
        readers.forEach { $0.restrictToJobs() }
        let core: WriterCore
        do {
            core = try WriterCore(connection: writer, maxBatch: configuration.maxWriteBatch, maxRetries: configuration.maxWriteRetries,
                                  monitor: monitor, checkpointer: checkpointer, logger: logger)
        } catch {
            readers.forEach { $0.close() }
            checkpointer?.close()
            writer.close()
            monitor?.close()
            throw error
        }
        self.core = core
        do {
            pool = try ReaderPool(sources: readers.isEmpty ? [.writer(core)] : readers.map { .connection($0) },
                                  maxQueued: configuration.maxQueuedReads, monitor: monitor, logger: logger)
        } catch {
            readers.forEach { $0.close() }
            core.stopAndDrain()
            checkpointer?.close()
            core.closeConnection()
            monitor?.close()
            throw error
        }
    }

    deinit { close() }

    // MARK: - Reads

    /// Runs `body` on a reader thread, on a read-only connection inside a read transaction (one
    /// consistent snapshot for all its statements), and returns its result. The caller suspends
    /// meanwhile (it never blocks its thread); when every reader is busy the read waits in a
    /// FIFO queue of at most `maxQueuedReads`, past which it throws `DatabaseOverloadedError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        if let monitor, let error = monitor.unavailableError() { throw error }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
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
    /// the calling thread through the writer connection. Never call it (nor `writeSync`) from inside
    /// a `writeSync`/`withWriterConnection` body: the writer's lock is not recursive; read through
    /// the connection that body is given.
    public func readSync<T>(_ body: (SQLConnection) throws -> T) throws -> T {
        if routesReadsThroughWriter {
            return try core.withConnection { connection in
                // A transaction left open on the writer connection (by a caller that holds it
                // between statements): read within it.
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

    /// Runs `body` inside one read snapshot: SQLite `BEGIN DEFERRED` (WAL: committed data as of the
    /// first read); PostgreSQL `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
    /// (https://www.postgresql.org/docs/15/transaction-iso.html#XACT-REPEATABLE-READ): the same
    /// guarantee, one consistent view for every statement of the read.
    static func snapshot(_ connection: SQLConnection, _ body: (SQLConnection) throws -> Void) throws {
        try connection.executeControl(connection.statements.beginReadSnapshot)
        do {
            try body(connection)
            try connection.executeControl("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.executeControl("ROLLBACK") }
            throw error
        }
    }

    // MARK: - Writes

    /// Queues `body` for the writer thread and returns its result once the transaction that
    /// contains it has COMMITted (durable). If `body` throws, only its own changes are rolled
    /// back (SAVEPOINT) and the error is rethrown here; if the COMMIT fails, every successful
    /// job of the batch gets the commit error.
    ///
    /// RULE: `body` touches only the database. On PostgreSQL it may run more than once (a batch
    /// lost to a serialization failure, deadlock or lost connection is re-run, each job alone, up
    /// to `database.maxWriteRetries` times); only the committed run's result is returned. While the
    /// database is unreachable this throws `DatabaseUnavailableError` without queueing.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        if let monitor, let error = monitor.unavailableError() { throw error }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = TypedWriteJob(body: body, continuation: continuation)
            if !core.enqueue(job) {
                continuation.resume(throwing: StorageError.misuse("database is closed"))
            }
        }
    }

    /// `write`, and `committed` with its result on the writer thread once the transaction has
    /// COMMITted, before the caller resumes: the `committed` hooks of all writes run one at a time,
    /// in commit order (a job's hook after every hook of the jobs committed before it). Not called
    /// when the job or its COMMIT fails. A hook must only hand its value on (append to a queue):
    /// it runs on the writer thread, which meanwhile commits nothing else. For events that must
    /// leave in the order their changes committed (docs/realtime.md "Order").
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T,
                                   committed: @escaping @Sendable (T) -> Void) async throws -> T {
        if let monitor, let error = monitor.unavailableError() { throw error }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = TypedWriteJob(body: body, continuation: continuation, committed: committed)
            if !core.enqueue(job) {
                continuation.resume(throwing: StorageError.misuse("database is closed"))
            }
        }
    }

    /// Runs `body` in its own `BEGIN IMMEDIATE` transaction on the calling thread (blocking),
    /// serialized with the writer thread. For the CLI, migrations, tests and seeding.
    @discardableResult
    public func writeSync<T>(_ body: (SQLConnection) throws -> T) throws -> T {
        try core.writeSync(body)
    }

    /// Runs `body` with the writer connection outside any transaction (blocking, serialized with
    /// the writer thread). For statements that cannot run in a transaction (`VACUUM`,
    /// `PRAGMA wal_checkpoint`) and for `Migrator`'s bookkeeping.
    public func withWriterConnection<T>(_ body: (SQLConnection) throws -> T) throws -> T {
        try core.withConnection(body)
    }

    /// Runs `body` on the writer thread between group commits, alone and outside any
    /// transaction (it may open its own, e.g. with `connection.transaction`). For background
    /// maintenance: WAL checkpoints and batched pruning, which must neither block an event loop
    /// nor hold the write lock for long. Durable like `write` once it returns.
    @discardableResult
    public func maintenance<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        if let monitor, let error = monitor.unavailableError() { throw error }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
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
        guard dialect == .sqlite else { return CheckpointResult(busy: false, walFrames: -1, checkpointedFrames: -1) }
        let busyTimeout = configuration.busyTimeout.wholeMilliseconds
        let checkpointer = checkpointer
        return try await maintenance { c in
            try c.executeScript("PRAGMA busy_timeout = 0")
            defer { try? c.executeScript("PRAGMA busy_timeout = \(busyTimeout)") }
            let truncate = {
                try c.first("PRAGMA wal_checkpoint(TRUNCATE)") {
                    CheckpointResult(busy: $0.int(0) != 0, walFrames: $0.int(1), checkpointedFrames: $0.int(2))
                } ?? CheckpointResult(busy: false, walFrames: -1, checkpointedFrames: -1)
            }
            guard let checkpointer else { return try truncate() }
            // Not while the checkpointer's pass holds SQLite's checkpoint lock (it would only report busy).
            return try checkpointer.passLock.withLock {
                let result = try truncate()
                checkpointer.noteCheckpoint(walFrames: result.walFrames, copied: result.checkpointedFrames)
                return result
            }
        }
    }

    /// The WAL's checkpoints so far (SQLite file databases in WAL mode; zeros otherwise):
    /// background PASSIVE passes, restarts the writer ran at `walMaxBytes`, restarts that readers
    /// kept from finishing, the writer's time in restarts, and the WAL's length in frames after
    /// the last commit.
    public var walCheckpoints: (passes: UInt64, restarts: UInt64, restartsBusy: UInt64, restartNanoseconds: UInt64, walFrames: Int) {
        guard let checkpointer else { return (0, 0, 0, 0, 0) }
        return (checkpointer.passes.load(ordering: .relaxed), checkpointer.restarts.load(ordering: .relaxed),
                checkpointer.restartsBusy.load(ordering: .relaxed), checkpointer.restartNanoseconds.load(ordering: .relaxed),
                checkpointer.walFrames.load(ordering: .relaxed))
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
    ///
    /// A `SELECT 1` that succeeded less than `healthPingReuseNanoseconds` ago answers for this one
    /// too: a probe polled thousands of times a second (a load balancer, a benchmark) costs one
    /// reader round trip a second, not one per request (the round trip was 39 % of a `/health`,
    /// bench/history/2026-11.md "HTTP per-request overhead"). What makes the database unusable still shows
    /// at once: a closed database and an unreachable PostgreSQL (`monitor`) are checked on every
    /// call, and a failed ping forgets the last good one.
    public func health() async -> Health {
        if let known = knownHealth() { return known }
        let now = DispatchTime.now().uptimeNanoseconds
        guard pool.hasIdleReader else { return .busy }
        do {
            guard try await read({ try $0.scalarInt("SELECT 1") }) == 1 else {
                lastHealthyPing.store(0, ordering: .relaxed)
                return .failed
            }
            lastHealthyPing.store(max(now, 1), ordering: .relaxed)
            return .ok
        } catch is DatabaseOverloadedError {
            return .busy
        } catch {
            lastHealthyPing.store(0, ordering: .relaxed)
            return .failed
        }
    }

    /// What `health()` answers without a round trip, or nil when it needs one: `.failed` for a
    /// closed or unreachable database, `.ok` within a second of a good ping. Not `async`: a probe
    /// that it answers completes on the event loop without a hop (an `await` of `health()` is one).
    public func knownHealth() -> Health? {
        if monitor?.isDown == true || closed.load(ordering: .relaxed) { return .failed }
        let last = lastHealthyPing.load(ordering: .relaxed)
        if last != 0, DispatchTime.now().uptimeNanoseconds &- last < Self.healthPingReuseNanoseconds { return .ok }
        return nil
    }

    /// How long a successful `health()` ping answers for later calls: 1 s.
    public static let healthPingReuseNanoseconds: UInt64 = 1_000_000_000

    public enum Health: Sendable { case ok, busy, failed }

    /// Why the database is unreachable right now (PostgreSQL), nil while it is reachable: `/health`
    /// shows it with `"database": "unavailable"`.
    public var unavailableReason: String? { monitor?.unavailableError()?.reason }

    /// `health() != .failed`.
    public func ping() async -> Bool { await health() != .failed }

    // MARK: - Shutdown

    /// Refuses new writes, finishes (commits) every queued write, lets every queued read finish,
    /// then closes all connections. Idempotent; blocks until the writer and reader threads are done.
    public func close() {
        closed.store(true, ordering: .relaxed)
        core.stopAndDrain()
        pool.close()
        if let checkpointer {
            checkpointer.close()
            core.connectionLock.withLock {
                if !core.connectionClosed, let sqlite = core.connection.sqlite { checkpointer.uninstall(from: sqlite) }
            }
        }
        // The writer closes last: as the last connection it checkpoints and removes the WAL.
        core.closeConnection()
        monitor?.close()
    }
}
