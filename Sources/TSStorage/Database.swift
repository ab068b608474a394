import Foundation
import Logging

/// The application's database: one writer connection on a dedicated thread with group commit,
/// and a pool of read-only connections for synchronous reads.
///
/// - Writes (`write`) are queued to the writer thread, which commits up to
///   `maxWriteBatch` of them in one transaction (each job in its own SAVEPOINT) and resumes the
///   callers only after the COMMIT: a returned `write` is durable.
/// - Reads (`read`) use a read-only connection from the pool inside a `BEGIN DEFERRED`
///   snapshot; in WAL mode they run concurrently with the writer and see committed data only.
/// - `":memory:"` (and `readerCount == 0`): reads are routed through the writer connection
///   (under its lock), so every caller sees the same in-memory database.
///
/// Rules for callers: a `write` job must not run `BEGIN`/`COMMIT`/`ROLLBACK` itself (use
/// `connection.transaction`/`savepoint`, which nest); a `read` body must not write; do not
/// call `close()` or `await` another `write` from inside a job (the writer thread would wait on itself).
///
/// `@unchecked Sendable` invariant: the writer connection is only touched through `core`
/// (which serializes it with a lock and its own thread); each reader connection is used by
/// exactly one thread between `checkoutReader` and `checkinReader`; `availableReaders` and
/// `isClosed` are guarded by `poolCondition`. Everything else is immutable.
public final class Database: @unchecked Sendable {
    public let path: String
    public let configuration: DatabaseConfiguration
    /// True when reads go through the writer connection (`:memory:` or `readerCount == 0`).
    public let routesReadsThroughWriter: Bool
    let logger: Logger
    private let core: WriterCore
    private let readers: [SQLiteConnection]
    private var availableReaders: [SQLiteConnection]
    private var isClosed = false
    private let poolCondition = NSCondition()

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
        self.readers = readers
        self.availableReaders = readers
        self.routesReadsThroughWriter = readers.isEmpty
        self.core = WriterCore(connection: writer, maxBatch: configuration.maxWriteBatch, logger: logger)
        logger.debug("sqlite: opened", metadata: ["path": "\(path)", "readers": "\(readers.count)"])
    }

    deinit { close() }

    static func isMemoryPath(_ path: String) -> Bool {
        path == ":memory:" || path.isEmpty || (path.hasPrefix("file:") && (path.contains(":memory:") || path.contains("mode=memory")))
    }

    // MARK: - Reads

    /// Runs `body` synchronously on a read-only connection inside a read transaction (one
    /// consistent snapshot for all its statements). Blocks while all readers are busy.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if routesReadsThroughWriter {
            return try core.withConnection { connection in
                // Nested inside a write on this thread: read within that transaction.
                if connection.isInTransaction { return try body(connection) }
                try connection.executeScript("PRAGMA query_only = 1")
                defer { try? connection.executeScript("PRAGMA query_only = 0") }
                return try Database.snapshot(connection, body)
            }
        }
        let connection = try checkoutReader()
        defer { checkinReader(connection) }
        return try Database.snapshot(connection, body)
    }

    private static func snapshot<T>(_ connection: SQLiteConnection, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.executeScript("BEGIN DEFERRED")
        do {
            let result = try body(connection)
            try connection.executeScript("COMMIT")
            return result
        } catch {
            if connection.isInTransaction { try? connection.executeScript("ROLLBACK") }
            throw error
        }
    }

    private func checkoutReader() throws -> SQLiteConnection {
        poolCondition.lock()
        defer { poolCondition.unlock() }
        while true {
            if isClosed { throw StorageError.misuse("database is closed") }
            if let connection = availableReaders.popLast() { return connection }
            poolCondition.wait()
        }
    }

    private func checkinReader(_ connection: SQLiteConnection) {
        poolCondition.lock()
        availableReaders.append(connection)
        poolCondition.broadcast()
        poolCondition.unlock()
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

    // MARK: - Metrics

    /// Jobs queued for the writer thread and not yet started.
    public var writeQueueDepth: Int { core.queueDepth }
    /// Duration of the most recent write transaction.
    public var lastTransactionNanoseconds: UInt64 { core.statsSnapshot.lastTransactionNanoseconds }
    public var stats: DatabaseStats { core.statsSnapshot }

    /// Cheap liveness probe for `/health`: `SELECT 1` through the read path.
    public func ping() -> Bool {
        (try? read { try $0.scalarInt("SELECT 1") }) == 1
    }

    // MARK: - Shutdown

    /// Refuses new writes, finishes (commits) every queued write, then closes all connections.
    /// Idempotent; blocks until the writer thread has drained.
    public func close() {
        core.stopAndDrain()
        poolCondition.lock()
        if !isClosed {
            isClosed = true
            poolCondition.broadcast()  // wake readers waiting in checkoutReader: they throw
            // Wait for readers in use to be checked back in, then close them.
            while availableReaders.count < readers.count { poolCondition.wait() }
            readers.forEach { $0.close() }
        }
        poolCondition.unlock()
        // The writer closes last: as the last connection it checkpoints and removes the WAL.
        core.closeConnection()
    }
}
