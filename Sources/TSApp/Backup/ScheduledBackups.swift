import Dispatch
import Foundation
import Logging
import TSContract
import TSJSON
import TSRoutes
import TSStorage
import TSSync

/// Backups taken while serving (`backup.directory`, `backup.interval`, `backup.keep`): every
/// interval a consistent copy of the SQLite database goes into the directory as
/// `touchsync-<UTC time>.sqlite`, is checked with `PRAGMA integrity_check`, and the oldest copies
/// beyond `keep` are deleted. The copy runs on a dispatch queue of its own with its own read-only
/// connection (the online backup API, `SQLiteBackup`): never on an event loop, and never on the
/// writer thread, whose group commits go on while it runs. The last outcome is in `/health` and
/// `/metrics`, and each backup logs one line.
public final class ScheduledBackups: Sendable {
    public struct Configuration: Sendable {
        public var directory: String
        public var interval: Duration
        /// Newest backups kept; 0 keeps every one.
        public var keep: Int

        public init(directory: String, interval: Duration, keep: Int) {
            self.directory = directory
            self.interval = interval
            self.keep = keep
        }
    }

    /// One backup's outcome.
    public struct Outcome: Sendable {
        public let finishedAt: Date
        public let file: String
        public let bytes: Int64
        public let error: String?
        public var ok: Bool { error == nil }
    }

    public let databasePath: String
    public let configuration: Configuration
    private let logger: Logger
    private let state = LockedValue<(last: Outcome?, ok: Int, failed: Int)>((nil, 0, 0))
    private let task = LockedValue<Task<Void, Never>?>(nil)
    private static let queue = DispatchQueue(label: "touchsync.backup", qos: .utility)

    public init(databasePath: String, configuration: Configuration, logger: Logger) {
        self.databasePath = databasePath
        self.configuration = configuration
        self.logger = logger
    }

    /// The scheduler the settings ask for (`Configuration(reader:)`): nil when `backup.directory`
    /// is unset, and (with a log line saying why) for PostgreSQL or an in-memory database.
    static func make(configuration: Configuration?, databasePath: String, postgres: Bool, logger: Logger) throws -> ScheduledBackups? {
        guard let configuration else { return nil }
        if postgres {
            logger.warning("backup.directory is set but the database is PostgreSQL: scheduled backups are off; use pg_dump (docs/backup.md)")
            return nil
        }
        if databasePath == ":memory:" {
            logger.warning("backup.directory is set but database.path is :memory:: scheduled backups are off")
            return nil
        }
        guard configuration.interval > .zero else { throw ConfigurationError("backup.interval must be longer than 0s when backup.directory is set") }
        guard configuration.keep >= 0 else { throw ConfigurationError("backup.keep must be 0 (keep all) or more") }
        let directory = configuration.directory
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ConfigurationError("backup.directory \(directory) cannot be created: \(error.localizedDescription)")
        }
        return ScheduledBackups(databasePath: databasePath, configuration: configuration, logger: logger)
    }

    /// Starts the timer (idempotent). The first backup is due one interval after the newest one
    /// already in the directory (at once when there is none, or it is older): a server restarted
    /// more often than `backup.interval` still backs up.
    public func start() {
        task.withLock { t in
            guard t == nil else { return }
            let interval = configuration.interval
            removeUnfinished()
            let first = firstDelay()
            t = Task.detached(priority: .background) { [self] in
                var delay = first
                while !Task.isCancelled {
                    do { try await Task.sleep(for: delay) } catch { return }
                    _ = await runOnce()
                    delay = interval
                }
            }
        }
    }

    /// The time until the first backup: the interval minus the age of the newest backup there.
    public func firstDelay(now: Date = Date()) -> Duration {
        let newest = backupFiles().last.flatMap { name in
            try? FileManager.default.attributesOfItem(atPath: (configuration.directory as NSString).appendingPathComponent(name))[.modificationDate] as? Date
        }
        guard let newest else { return .zero }
        let remaining = configuration.interval - .milliseconds(Int64(max(0, now.timeIntervalSince(newest)) * 1000))
        return remaining > .zero ? remaining : .zero
    }

    /// Deletes copies a process that stopped mid-backup left behind (`touchsync-….sqlite.partial-<pid>`).
    private func removeUnfinished() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: configuration.directory)) ?? []
        where name.hasPrefix("touchsync-") && name.contains(".sqlite.partial-") {
            unlink((configuration.directory as NSString).appendingPathComponent(name))
            logger.info("backup: removed \(name), left by a backup that did not finish")
        }
    }

    /// The scheduled backups in the directory, oldest first (their names sort in time order).
    private func backupFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: configuration.directory)) ?? [])
            .filter { $0.hasPrefix("touchsync-") && $0.hasSuffix(".sqlite") }
            .sorted()
    }

    /// Stops the timer and waits for a backup under way (before the database closes).
    public func stop() async {
        let running = task.withLock { t -> Task<Void, Never>? in defer { t = nil }; return t }
        running?.cancel()
        await running?.value
    }

    /// One backup and rotation, on the backup queue.
    @discardableResult
    public func runOnce() async -> Outcome {
        await withCheckedContinuation { (cont: CheckedContinuation<Outcome, Never>) in
            Self.queue.async { cont.resume(returning: self.backupNow()) }
        }
    }

    private func backupNow() -> Outcome {
        let started = Date()
        let target = (configuration.directory as NSString).appendingPathComponent(DatabaseBackup.fileName(at: started))
        let outcome: Outcome
        do {
            let report = try DatabaseBackup.backup(databasePath: databasePath, to: target, now: started)
            outcome = Outcome(finishedAt: Date(), file: report.copy.path, bytes: report.copy.bytes, error: nil)
            let removed = rotate()
            let ms = Int(Date().timeIntervalSince(started) * 1000)
            let rotated = removed.isEmpty ? "" : "; removed \(removed.count) older: \(removed.joined(separator: ", "))"
            logger.info("backup: wrote \(report.copy.path) (\(report.copy.bytes) bytes, \(ms) ms, integrity_check ok)\(rotated)")
        } catch {
            unlink(target)  // a copy that failed its check is not a backup
            outcome = Outcome(finishedAt: Date(), file: target, bytes: 0, error: "\(error)")
            logger.error("backup: \(target) failed (the next one runs in \(configuration.interval)): \(error)")
        }
        state.withLock { s in
            s.last = outcome
            if outcome.ok { s.ok += 1 } else { s.failed += 1 }
        }
        return outcome
    }

    /// Deletes the oldest backups beyond `keep`; returns their names.
    private func rotate() -> [String] {
        guard configuration.keep > 0 else { return [] }
        let names = backupFiles()
        guard names.count > configuration.keep else { return [] }
        let old = names.prefix(names.count - configuration.keep)
        for name in old { unlink((configuration.directory as NSString).appendingPathComponent(name)) }
        return Array(old)
    }

    public var lastOutcome: Outcome? { state.current.last }

    /// `/health`'s `backup` member: the last outcome; a failed last backup degrades the node.
    var health: HealthComponent {
        HealthComponent(name: "backup", check: { [self] in
            guard let last = lastOutcome else { return ("pending", nil) }
            return last.ok ? ("ok", nil) : ("failed", "the last backup failed: \(last.error ?? "")")
        }, detail: { [self] in
            var o: JSONObject = ["directory": .string(configuration.directory)]
            guard let last = lastOutcome else {
                o["status"] = "pending"
                return .object(o)
            }
            o["status"] = last.ok ? "ok" : "failed"
            o["at"] = .string(ISO8601DateFormatter().string(from: last.finishedAt))
            o["file"] = .string(last.file)
            o["bytes"] = .int(last.bytes)
            if let error = last.error { o["error"] = .string(error) }
            return .object(o)
        })
    }

    /// The backup families of `/metrics`.
    func render(into out: inout PrometheusText) {
        let s = state.current
        out.family("touchsync_backups_total", type: "counter", help: "Scheduled backups taken, by outcome.",
                   by: "outcome", [("ok", Double(s.ok)), ("failed", Double(s.failed))])
        out.single("touchsync_backup_last_ok", type: "gauge", help: "1 when the last scheduled backup succeeded, 0 when it failed or none ran yet.",
                   s.last?.ok == true ? 1 : 0)
        out.single("touchsync_backup_last_timestamp_seconds", type: "gauge", help: "Unix time the last scheduled backup finished (0: none yet).",
                   s.last.map { $0.finishedAt.timeIntervalSince1970.rounded() } ?? 0)
        out.single("touchsync_backup_last_bytes", type: "gauge", help: "Size of the last scheduled backup file in bytes (0 when it failed).",
                   Double(s.last?.bytes ?? 0))
    }
}
