/// SQLite settings applied to every connection (https://sqlite.org/pragma.html).
public struct DatabaseConfiguration: Sendable {
    /// `PRAGMA synchronous` (https://sqlite.org/pragma.html#pragma_synchronous).
    /// In WAL mode, FULL fsyncs the WAL on every commit, so a committed (and answered) write
    /// survives power loss as well as `kill -9`; NORMAL survives `kill -9` but may lose the
    /// last transactions on power loss.
    public enum Synchronous: String, Sendable, ExpressibleByStringLiteral {
        case full = "FULL"
        case normal = "NORMAL"

        /// Case-insensitive parse of "FULL" / "NORMAL" (for configuration files).
        public init?(string: String) {
            self.init(rawValue: string.uppercased())
        }

        public init(stringLiteral value: String) {
            guard let v = Synchronous(string: value) else { preconditionFailure("synchronous must be FULL or NORMAL, got \(value)") }
            self = v
        }
    }

    /// `PRAGMA journal_mode` (https://sqlite.org/wal.html). WAL lets readers run while the
    /// writer writes; the others exist for tests and odd file systems.
    public enum JournalMode: String, Sendable {
        case wal = "WAL"
        case delete = "DELETE"
        case truncate = "TRUNCATE"
    }

    /// `sqlite3_busy_timeout`: how long a connection waits for a lock held by another
    /// connection or process before failing with SQLITE_BUSY (whole milliseconds). Default 5 s.
    public var busyTimeout: Duration
    /// Default FULL.
    public var synchronous: Synchronous
    /// Read-only connections in the read pool (file databases). 0 routes reads through the
    /// writer connection. Default 2.
    public var readerCount: Int
    /// Group-commit bound: at most this many queued `write` jobs share one transaction. Default 64.
    public var maxWriteBatch: Int
    /// Default WAL.
    public var journalMode: JournalMode
    /// `PRAGMA foreign_keys`. Default on.
    public var foreignKeys: Bool
    /// Prepared statements kept per connection (keyed by SQL text); when full the unused ones
    /// are finalized. Default 256.
    public var statementCacheCapacity: Int
    /// Reads allowed to wait for a free reader connection (`database.maxQueuedReads`); past it
    /// `Database.read` throws `DatabaseOverloadedError` (HTTP 503). Default 1024.
    public var maxQueuedReads: Int
    /// `PRAGMA journal_size_limit` on the writer (https://sqlite.org/pragma.html#pragma_journal_size_limit):
    /// after a checkpoint resets the WAL, its file is truncated to at most this many bytes, so a
    /// burst does not leave a large WAL behind. -1 = no limit. Default 64 MiB.
    public var journalSizeLimitBytes: Int
    /// `PRAGMA wal_autocheckpoint` on the writer (https://sqlite.org/wal.html#automatic_checkpoint):
    /// a PASSIVE checkpoint runs after a commit that leaves the WAL at least this many pages
    /// long. 0 turns automatic checkpoints off. Default 10,000 (≈ 40 MB of 4 KB pages; SQLite's
    /// is 1000): a checkpoint writes each page once however often it changed since the last one,
    /// so under a write load of random B-tree pages (reaction toggles) 1000 frames rewrote
    /// nearly every frame into the database and stalled the writer on the database's fsync about
    /// ten times a second (bench/RESULTS.md "Toggle under load, round 3").
    public var walAutocheckpointPages: Int
    /// `PRAGMA mmap_size` on every SQLite connection (https://sqlite.org/mmap.html): pages of the
    /// database file are read through a memory map instead of a `pread` copy each (writes still
    /// go through `pwrite`, the WAL is still read with `pread`). 0 turns it off. Default 256 MiB
    /// (address space, not memory: the kernel's page cache backs it).
    public var mmapSizeBytes: Int = 256 << 20
    /// `PRAGMA cache_size` of the writer connection, in KiB (https://sqlite.org/pragma.html#pragma_cache_size):
    /// the pages a group commit touches stay cached across commits instead of being read back
    /// from the WAL (readers' caches are reset by every commit, so they keep SQLite's default).
    /// Default 32 MiB.
    public var writerCacheKiB: Int = 32 << 10

    // PostgreSQL (database.url); docs/storage-postgres.md.
    /// libpq `connect_timeout`: the longest one connection attempt may take. Default 5 s.
    public var postgresConnectTimeout: Duration = .seconds(5)
    /// `statement_timeout` of every session: a statement running longer is cancelled by the server. Default 30 s.
    public var postgresStatementTimeout: Duration = .seconds(30)
    /// After the database became unreachable, the first reconnection attempt waits this long; each
    /// failed attempt doubles it, up to `reconnectMaxBackoff`. Default 250 ms.
    public var reconnectInitialBackoff: Duration = .milliseconds(250)
    /// The longest wait between two reconnection attempts. Default 10 s.
    public var reconnectMaxBackoff: Duration = .seconds(10)
    /// How long start-up keeps retrying (with the same backoff) before giving up on an unreachable
    /// database. 0 = one attempt. Default 30 s (a cluster's nodes may start before PostgreSQL).
    public var startupWait: Duration = .seconds(30)
    /// A write batch lost to a serialization failure, a deadlock or a lost connection is re-run,
    /// each job alone, at most this many times. Default 3.
    public var maxWriteRetries: Int = 3

    public init(busyTimeout: Duration = .seconds(5),
                synchronous: Synchronous = .full,
                readerCount: Int = 2,
                maxWriteBatch: Int = 64,
                journalMode: JournalMode = .wal,
                foreignKeys: Bool = true,
                statementCacheCapacity: Int = 256,
                maxQueuedReads: Int = 1024,
                journalSizeLimitBytes: Int = 64 << 20,
                walAutocheckpointPages: Int = 10_000) {
        self.busyTimeout = busyTimeout
        self.synchronous = synchronous
        self.readerCount = readerCount
        self.maxWriteBatch = maxWriteBatch
        self.journalMode = journalMode
        self.foreignKeys = foreignKeys
        self.statementCacheCapacity = statementCacheCapacity
        self.maxQueuedReads = maxQueuedReads
        self.journalSizeLimitBytes = journalSizeLimitBytes
        self.walAutocheckpointPages = walAutocheckpointPages
    }
}
