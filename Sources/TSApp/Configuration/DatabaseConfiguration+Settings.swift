import TSStorage

/// The storage settings (`database.*`): SQLite's pragmas and pool, PostgreSQL's connection.
extension DatabaseConfiguration {
    init(reader: AppConfiguration) throws {
        self.init()
        busyTimeoutMilliseconds = reader[.databaseBusyTimeout].settingMilliseconds
        guard let sync = DatabaseConfiguration.Synchronous(string: reader[.databaseSynchronous]) else {
            throw ConfigurationError("database.synchronous must be FULL or NORMAL")
        }
        synchronous = sync
        readerCount = max(1, reader[.databaseReaders])
        maxWriteBatch = max(1, reader[.databaseMaxWriteBatch])
        maxQueuedReads = max(1, reader[.databaseMaxQueuedReads])
        journalSizeLimitBytes = reader[.databaseJournalSizeLimitBytes]
        walAutocheckpointPages = max(0, reader[.databaseWalAutocheckpointPages])
        walMaxBytes = max(1 << 20, reader[.databaseWalMaxBytes])
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
