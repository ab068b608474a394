import Dispatch
import Logging
import TSSync

/// Opening a PostgreSQL database (docs/storage-postgres.md): the writer connection, retried for
/// `database.startupWait` while the server does not answer yet; `max(1, readerCount)` reader
/// connections; the monitor that reports the server unreachable and reconnects
/// (ConnectionMonitor.swift). A build without libpq (macOS) refuses a PostgreSQL URL in one line.
extension Database {
    /// Opens the PostgreSQL database at `url` (`postgres://` or `postgresql://`); `init(url:)` calls it.
    convenience init(postgresURL url: String, configuration: DatabaseConfiguration, logger: Logger) throws {
        #if canImport(CPostgres)
        let redacted = PostgresURL.redact(url)
        let writer = try Database.connectPostgres(url: url, readOnly: false, configuration: configuration, logger: logger)
        let readers = try Database.openReaders(max(1, configuration.readerCount), orClose: { writer.close() }) {
            SQLConnection(postgres: try PostgresConnection(url: url, readOnly: true, configuration: configuration))
        }
        let monitor: ConnectionMonitor
        do {
            monitor = try ConnectionMonitor(name: "PostgreSQL at \(Database.hostPart(redacted))",
                                            initialBackoff: configuration.reconnectInitialBackoff,
                                            maxBackoff: configuration.reconnectMaxBackoff, logger: logger) {
                try PostgresConnection(url: url, readOnly: true, configuration: configuration).close()
            }
        } catch {
            readers.forEach { $0.close() }
            writer.close()
            throw error
        }
        try self.init(path: redacted, dialect: .postgres, writer: SQLConnection(postgres: writer), readers: readers,
                      monitor: monitor, configuration: configuration, logger: logger)
        writer.roundTrips = postgresRoundTrips
        for reader in readers { reader.postgres?.roundTrips = postgresRoundTrips }
        logger.info("storage: PostgreSQL at \(redacted), \(readers.count) readers")
        #else
        throw StorageError.misuse("this build has no PostgreSQL support: libpq is linked on Linux only (apt-get install libpq-dev "
                                  + "and build on Linux), so database.url \(PostgresURL.redact(url)) cannot be used; unset it to use SQLite")
        #endif
    }

    /// `host:port/db` of a redacted URL, for log lines.
    static func hostPart(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let afterAt = rest.lastIndex(of: "@").map { rest[rest.index(after: $0)...] } ?? rest
        return String(afterAt.prefix { $0 != "?" })
    }

    #if canImport(CPostgres)
    /// The first connection, retried with backoff for `startupWait` (a cluster's nodes may start
    /// before the database accepts connections).
    static func connectPostgres(url: String, readOnly: Bool, configuration: DatabaseConfiguration, logger: Logger) throws -> PostgresConnection {
        let deadline = DispatchTime.now().uptimeNanoseconds &+ configuration.startupWait.clockNanoseconds
        var backoff = max(.milliseconds(1), configuration.reconnectInitialBackoff)
        let pause = Condition()
        var logged = false
        while true {
            do {
                return try PostgresConnection(url: url, readOnly: readOnly, configuration: configuration)
            } catch let error as StorageError where error.isConnectionLost {
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < deadline else { throw error }
                if !logged {
                    logger.warning("storage: \(error.message); retrying for up to \(configuration.startupWait) (database.startupWait)")
                    logged = true
                }
                let left = Duration.nanoseconds(Int64(deadline - now))
                pause.withLock { _ = pause.wait(timeout: min(backoff, left)) }
                backoff = min(backoff * 2, max(configuration.reconnectMaxBackoff, .milliseconds(1)))
            }
        }
    }
    #endif
}
