import TSStorage

/// The storage settings (`database.*`): SQLite's pragmas and pool, PostgreSQL's connection.
extension SettingKeys {
    public static let databasePath = SettingKey<String>("database.path", "./data/touchsync.sqlite", help: "SQLite file, or :memory:.")
    public static let databaseSynchronous = SettingKey<String>("database.synchronous", "FULL", help: "SQLite synchronous mode in WAL: FULL (fsync each group commit) or NORMAL.")
    public static let databaseBusyTimeout = SettingKey<Duration>("database.busyTimeout", "5s", integerForm: .init("database.busyTimeoutMs", unit: .milliseconds(1)),
            help: "SQLite busy timeout.")
    public static let databaseReaders = SettingKey<Int>("database.readers", 2, help: "Read-only connections in the pool.")
    public static let databaseMaxWriteBatch = SettingKey<Int>("database.maxWriteBatch", 64, help: "Most write jobs committed in one group commit.")
    public static let databaseMigrationsDir = SettingKey<String?>("database.migrationsDir", nil, help: "Directory of NNNN_*.sql migrations to use instead of the ones built into the binary (null: the built-in ones); PostgreSQL's are in its postgres/ subdirectory.")
    // PostgreSQL as the shared storage of several nodes (docs/storage-postgres.md).
    public static let databaseUrl = SettingKey<String?>("database.url", nil,
            help: "postgres://user:pass@host:port/db selects PostgreSQL instead of the SQLite file database.path (serve --database-url). Linux builds only.")
    public static let databaseConnectTimeout = SettingKey<Duration>("database.connectTimeout", "5s",
            help: "PostgreSQL: the longest one connection attempt may take (libpq connect_timeout, whole seconds, at least 1s).")
    public static let databaseStatementTimeout = SettingKey<Duration>("database.statementTimeout", "30s",
            help: "PostgreSQL: statement_timeout of every session; a statement running longer is cancelled by the server (0s = no limit).")
    public static let databaseReconnectInitialBackoff = SettingKey<Duration>("database.reconnectInitialBackoff", "250ms",
            help: "PostgreSQL: wait before the first reconnection attempt after the database became unreachable; doubles after each failed attempt.")
    public static let databaseReconnectMaxBackoff = SettingKey<Duration>("database.reconnectMaxBackoff", "10s",
            help: "PostgreSQL: the longest wait between two reconnection attempts (while unreachable, requests get 503 UNAVAILABLE at once).")
    public static let databaseStartupWait = SettingKey<Duration>("database.startupWait", "30s",
            help: "PostgreSQL: how long start-up keeps retrying an unreachable database before giving up (0s = one attempt).")
    public static let databaseMaxWriteRetries = SettingKey<Int>("database.maxWriteRetries", 3,
            help: "PostgreSQL: re-runs of a write lost to a serialization failure, a deadlock or a lost connection (each job alone) before its error is returned.")
    // storage: the read queue, the WAL bound, notification pruning.
    public static let databaseMaxQueuedReads = SettingKey<Int>("database.maxQueuedReads", 1024,
            help: "Reads waiting for a free reader connection at most; past it a request gets 503 UNAVAILABLE with Retry-After.")
    public static let databaseJournalSizeLimitBytes = SettingKey<Int>("database.journalSizeLimitBytes", 67_108_864,
            help: "SQLite journal_size_limit: the WAL file is cut back to at most this many bytes after a checkpoint (-1 = no limit).")
    public static let databaseWalAutocheckpointPages = SettingKey<Int>("database.walAutocheckpointPages", 10_000,
            help: "SQLite wal_autocheckpoint: a checkpoint runs after a commit that leaves the WAL this many pages long (0 = off).")
    public static let databaseCheckpointInterval = SettingKey<Duration>("database.checkpointInterval", "60s",
            help: "Time between background wal_checkpoint(TRUNCATE)s, which never wait for readers (0s = off).")
    // toggle: the write path's I/O per commit.
    public static let databaseMmapSizeBytes = SettingKey<Int>("database.mmapSizeBytes", 268_435_456,
            help: "SQLite mmap_size of every connection: database pages are read through a memory map of at most this many bytes instead of one pread each (0 = off).")
    public static let databaseWriterCacheBytes = SettingKey<Int>("database.writerCacheBytes", 33_554_432,
            help: "SQLite cache_size of the writer connection in bytes: the pages group commits touch stay cached instead of being read back from the WAL.")

    /// The `database.*` keys, in documentation order.
    static let databaseKeys: [SettingKeys] = [
        .databasePath, .databaseSynchronous, .databaseBusyTimeout, .databaseReaders, .databaseMaxWriteBatch,
        .databaseMigrationsDir, .databaseUrl, .databaseConnectTimeout, .databaseStatementTimeout,
        .databaseReconnectInitialBackoff, .databaseReconnectMaxBackoff, .databaseStartupWait, .databaseMaxWriteRetries,
        .databaseMaxQueuedReads, .databaseJournalSizeLimitBytes, .databaseWalAutocheckpointPages, .databaseCheckpointInterval,
        .databaseMmapSizeBytes, .databaseWriterCacheBytes,
    ]
}

extension DatabaseConfiguration {
    init(reader: AppConfiguration) throws {
        self.init()
        busyTimeout = reader[.databaseBusyTimeout]
        guard let sync = DatabaseConfiguration.Synchronous(string: reader[.databaseSynchronous]) else {
            throw ConfigurationError("database.synchronous must be FULL or NORMAL")
        }
        synchronous = sync
        readerCount = max(1, reader[.databaseReaders])
        maxWriteBatch = max(1, reader[.databaseMaxWriteBatch])
        maxQueuedReads = max(1, reader[.databaseMaxQueuedReads])
        journalSizeLimitBytes = reader[.databaseJournalSizeLimitBytes]
        walAutocheckpointPages = max(0, reader[.databaseWalAutocheckpointPages])
        // toggle: reads through a memory map, the writer's page cache.
        mmapSizeBytes = max(0, reader[.databaseMmapSizeBytes])
        writerCacheKiB = max(0, reader[.databaseWriterCacheBytes]) / 1024
        // PostgreSQL connection settings.
        postgresConnectTimeout = reader[.databaseConnectTimeout]
        postgresStatementTimeout = reader[.databaseStatementTimeout]
        reconnectInitialBackoff = reader[.databaseReconnectInitialBackoff]
        reconnectMaxBackoff = reader[.databaseReconnectMaxBackoff]
        startupWait = reader[.databaseStartupWait]
        maxWriteRetries = max(0, reader[.databaseMaxWriteRetries])
    }
}
