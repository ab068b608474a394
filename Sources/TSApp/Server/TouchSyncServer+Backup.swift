import TSRoutes
import TSStorage

// backup hook: the database lock `touchsync restore` checks, and the scheduled backups' metrics.
extension TouchSyncServer {
    /// The shared `DatabaseLock` of a SQLite database file (nil for PostgreSQL and `:memory:`):
    /// while it is held, `touchsync restore` refuses and names this process.
    static func lockDatabase(path: String, postgres: Bool) throws -> DatabaseLock? {
        guard !postgres, path != ":memory:" else { return nil }
        do { return try DatabaseLock.shared(databasePath: path) } catch let held as DatabaseLock.Held {
            throw ConfigurationError("cannot open \(path): \(held)")
        }
    }

    /// The `/metrics` families beyond the built-in ones: Redis fan-out and scheduled backups, when on.
    static func extraMetrics(redis: RedisEventBridge?, broadcaster: RealtimeBroadcaster,
                             backups: ScheduledBackups?) -> (@Sendable (inout PrometheusText) -> Void)? {
        let redisPart = redisMetrics(redis, broadcaster: broadcaster)
        guard let backups else { return redisPart }
        return { out in
            redisPart?(&out)
            backups.render(into: &out)
        }
    }
}
