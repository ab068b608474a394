import Foundation
import TSContract
import TSRealtime
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
        } catch let failure as DatabaseLock.Failure {
            throw ConfigurationError("cannot open \(path): \(failure)")
        }
    }

    static func lockServing(path: String) throws -> DatabaseLock {
        do { return try DatabaseLock.serving(databasePath: path) } catch let serving as DatabaseLock.Serving {
            throw ConfigurationError("cannot serve \(path): \(serving)")
        } catch let failure as DatabaseLock.Failure {
            throw ConfigurationError("cannot open \(path): \(failure)")
        }
    }

    /// Checks `database.path` and creates its folder, with one clear line for each way it can be
    /// wrong, before anything is written: empty, a folder, a folder that is a file.
    static func prepareDatabaseFolder(_ path: String) throws {
        guard path != ":memory:" else { return }
        guard !path.isEmpty else {
            throw ConfigurationError("database.path (--database, TOUCHSYNC_DATABASE) is empty: name a SQLite file, or :memory: for a throw-away database")
        }
        var isFolder: ObjCBool = false
        if path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue) {
            throw ConfigurationError("database.path \(path) is a folder: name a file in it, e.g. \((path as NSString).appendingPathComponent("touchsync.sqlite"))")
        }
        let dir = (path as NSString).deletingLastPathComponent
        guard !dir.isEmpty else { return }
        // The nearest existing ancestor must be a folder: a file there cannot hold the database.
        var ancestor = dir
        while !ancestor.isEmpty, ancestor != "/", !FileManager.default.fileExists(atPath: ancestor, isDirectory: &isFolder) {
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        if !ancestor.isEmpty, FileManager.default.fileExists(atPath: ancestor, isDirectory: &isFolder), !isFolder.boolValue {
            throw ConfigurationError("database.path \(path): \(ancestor) is a file, not a folder")
        }
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw ConfigurationError("database.path \(path): cannot create the folder \(dir): \((error as NSError).localizedDescription)")
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
