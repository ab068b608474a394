import Logging
import TSStorage
import TSSync

/// Background upkeep that keeps the database from growing without bound:
/// pruning delivered notifications (`NotificationWorker.prune`) and truncating the WAL
/// (`Database.checkpoint`, on the writer thread between group commits). It runs on its own task on
/// a timer, never on a request's path; each round's work is a series of short writes.
public final class StorageMaintenance: Sendable {
    public struct Configuration: Sendable {
        /// What pruning removes (`notifications.retention`, `notifications.maxPerUser`, `notifications.pruneBatchSize`).
        public var retention: NotificationRetention
        /// Time between pruning rounds (`notifications.pruneInterval`); zero turns pruning off.
        public var pruneInterval: Duration
        /// Time between `wal_checkpoint(TRUNCATE)`s (`database.checkpointInterval`); zero turns them off
        /// (the background checkpointer, `database.walAutocheckpointPages`, and the WAL's bound,
        /// `database.walMaxBytes`, still hold: TSStorage's `WALCheckpointer`).
        public var checkpointInterval: Duration

        public init(retention: NotificationRetention = .init(), pruneInterval: Duration = .seconds(300), checkpointInterval: Duration = .seconds(60)) {
            self.retention = retention
            self.pruneInterval = pruneInterval
            self.checkpointInterval = checkpointInterval
        }
    }

    private let db: Database
    private let notifications: NotificationWorker
    private let configuration: Configuration
    private let logger: Logger
    private let sleep: @Sendable (Duration) async throws -> Void
    private let task = LockedValue<Task<Void, Never>?>(nil)

    /// `sleep` waits between rounds (injected so a test can drive the timer; default `Task.sleep`).
    public init(db: Database, notifications: NotificationWorker, configuration: Configuration, logger: Logger,
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.db = db
        self.notifications = notifications
        self.configuration = configuration
        self.logger = logger
        self.sleep = sleep
    }

    /// Starts the timer (idempotent).
    public func start() {
        let prune = configuration.pruneInterval
        let checkpoint = configuration.checkpointInterval
        guard prune > .zero || checkpoint > .zero else { return }
        task.withLock { t in
            guard t == nil else { return }
            t = Task.detached(priority: .background) { [self] in
                // One timer, ticking at the shorter interval; each job runs when its own interval has passed.
                let tick = [prune, checkpoint].filter { $0 > .zero }.min()!
                var sincePrune = Duration.zero
                var sinceCheckpoint = Duration.zero
                while !Task.isCancelled {
                    do { try await sleep(tick) } catch { return }
                    sincePrune += tick
                    sinceCheckpoint += tick
                    let doPrune = prune > .zero && sincePrune >= prune
                    let doCheckpoint = checkpoint > .zero && sinceCheckpoint >= checkpoint
                    if doPrune { sincePrune = .zero }
                    if doCheckpoint { sinceCheckpoint = .zero }
                    await runOnce(prune: doPrune, checkpoint: doCheckpoint)
                }
            }
        }
    }

    /// One round: prune, then checkpoint (so the pages the prune freed are in the database file).
    /// Errors are logged, never thrown: the next round tries again.
    public func runOnce(prune: Bool = true, checkpoint: Bool = true) async {
        if prune {
            do { try await notifications.prune(configuration.retention) } catch {
                logger.warning("notification pruning failed (next round retries): \(error)")
            }
        }
        if checkpoint {
            do {
                let r = try await db.checkpoint()
                if r.busy { logger.debug("wal checkpoint: a reader still uses the WAL; \(r.checkpointedFrames) of \(r.walFrames) frames copied") }
            } catch {
                logger.warning("wal checkpoint failed (next round retries): \(error)")
            }
        }
    }

    /// Stops the timer and waits for a round under way to finish (before the database closes).
    public func stop() async {
        let running = task.withLock { t -> Task<Void, Never>? in defer { t = nil }; return t }
        running?.cancel()
        await running?.value
    }
}
