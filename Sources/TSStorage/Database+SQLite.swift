import Logging

/// Opening a SQLite database: the writer connection (journal mode checked, file modes warned
/// about), `readerCount` read-only connections (none for `:memory:`, whose reads go through the
/// writer), and in WAL mode the checkpointer (WALCheckpointer.swift).
extension Database {
    /// Opens (creating if needed) the SQLite database at `path` with its writer thread and read pool.
    public convenience init(path: String, configuration: DatabaseConfiguration = .init(),
                            logger: Logger = Logger(label: "touchsync.storage")) throws {
        let memory = Database.isMemoryPath(path)
        Database.createPrivateFileIfMissing(path)
        let writer = try SQLiteConnection(path: path, readOnly: false, configuration: configuration)
        if !memory {
            let mode = (try? writer.scalarString("PRAGMA journal_mode"))?.uppercased() ?? "?"
            if mode != configuration.journalMode.rawValue {
                logger.warning("sqlite: journal_mode is \(mode), wanted \(configuration.journalMode.rawValue)", metadata: ["path": "\(path)"])
            }
            // After the open: the -wal and -shm exist now (WAL mode), with the database file's mode.
            if let warning = Database.widerModeWarning(path) { logger.warning("\(warning)") }
        }
        let readers = try Database.openReaders(memory ? 0 : configuration.readerCount, orClose: { writer.close() }) {
            SQLConnection(sqlite: try SQLiteConnection(path: path, readOnly: true, configuration: configuration))
        }
        var checkpointer: WALCheckpointer?
        if !memory && configuration.journalMode == .wal {
            do {
                checkpointer = try Database.makeCheckpointer(writer: writer, path: path, configuration: configuration, logger: logger)
            } catch {
                readers.forEach { $0.close() }
                writer.close()
                throw error
            }
        }
        try self.init(path: path, dialect: .sqlite, writer: SQLConnection(sqlite: writer), readers: readers,
                      monitor: nil, checkpointer: checkpointer, configuration: configuration, logger: logger)
        logger.debug("sqlite: opened", metadata: ["path": "\(path)", "readers": "\(readers.count)"])
    }

    /// The writer's automatic checkpoint off, its commit hook on, and the checkpointer thread with
    /// a connection of its own (`WALCheckpointer`; none when `walAutocheckpointPages` is 0: then
    /// only the hard bound `walMaxBytes` checkpoints, on the writer).
    private static func makeCheckpointer(writer: SQLiteConnection, path: String, configuration: DatabaseConfiguration,
                                         logger: Logger) throws -> WALCheckpointer {
        try writer.executeScript("PRAGMA wal_autocheckpoint = 0")
        let pageSize = Int(try writer.scalarInt("PRAGMA page_size") ?? 4096)
        var own: SQLiteConnection?
        if configuration.walAutocheckpointPages > 0 {
            // Writable, with the writer's `synchronous` and platform pragmas: a checkpoint's syncs
            // follow them (SQLiteConnection+Durability.swift).
            let c = try SQLiteConnection(path: path, readOnly: false, configuration: configuration)
            try c.executeScript("PRAGMA wal_autocheckpoint = 0")
            own = c
        }
        let checkpointer = try WALCheckpointer(connection: own, passivePages: configuration.walAutocheckpointPages,
                                               maxBytes: configuration.walMaxBytes, pageSize: pageSize, logger: logger)
        checkpointer.install(on: writer)
        return checkpointer
    }

    static func isMemoryPath(_ path: String) -> Bool {
        path == ":memory:" || path.isEmpty || (path.hasPrefix("file:") && (path.contains(":memory:") || path.contains("mode=memory")))
    }
}
