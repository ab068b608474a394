import TSStorage

/// Bounds on the stored notifications: one row per heart must not grow the
/// database forever. Pruning runs in the background (`StorageMaintenance`), never on a request's
/// path, and deletes in batches of `batchSize` rows, each its own short write, so the writer is
/// never held for long. Only DELIVERED rows (`seq` at or below the delivery cursor of their
/// table) are ever removed: an undelivered notification is never lost to pruning.
public struct NotificationRetention: Sendable, Equatable {
    /// Delivered notifications older than this (whole seconds) are removed (`notifications.retention`).
    /// 0 keeps them forever.
    public var retention: Duration
    /// Newest notifications kept per user's personal feed, and per room's feed of created
    /// elements (`notifications.maxPerUser`); older delivered ones are removed. 0 = no cap.
    public var maxPerFeed: Int
    /// Rows deleted per write (`notifications.pruneBatchSize`).
    public var batchSize: Int

    public init(retention: Duration = .seconds(30 * 86_400), maxPerFeed: Int = 1000, batchSize: Int = 500) {
        self.retention = retention
        self.maxPerFeed = maxPerFeed
        self.batchSize = max(1, batchSize)
    }
}

extension NotificationWorker {
    /// What one `prune` removed.
    public struct PruneResult: Sendable, Equatable {
        /// Rows past the retention (personal + room feeds).
        public var expired = 0
        /// Rows past a feed's cap.
        public var overCap = 0
        /// Delete statements (writes) it took.
        public var batches = 0
        public init() {}
    }

    private static let tables: [(table: String, feed: String, cursor: String)] = [
        ("notifications", "user_id", "user"), ("room_notifications", "room_id", "room"),
    ]

    /// Removes delivered notifications past `retention.retention` and beyond each feed's
    /// newest `retention.maxPerFeed`, in batches. Reads (which feeds are over their cap) run on a
    /// reader; each delete batch is one small write.
    @discardableResult
    public func prune(_ retention: NotificationRetention) async throws -> PruneResult {
        var result = PruneResult()
        let batch = Int64(retention.batchSize)
        let cursors = try await db.read { c in try Self.cursors(c) }
        for t in Self.tables {
            let delivered = t.cursor == "user" ? cursors.user : cursors.room
            guard delivered > 0 else { continue }
            // 1. Retention: the oldest rows come first in `seq` order; each batch looks at the
            //    next `batch` delivered rows (primary key order) and deletes those past the cutoff.
            let retentionSeconds = retention.retention.wholeSeconds
            if retentionSeconds > 0 {
                let cutoff = clock.nowSeconds() - retentionSeconds
                while true {
                    let n = try await db.write { c in
                        try c.run("""
                            DELETE FROM \(t.table) WHERE seq IN (SELECT seq FROM \(t.table) WHERE seq <= ? ORDER BY seq LIMIT ?) AND created_at < ?
                            """, [.int(delivered), .int(batch), .int(cutoff)])
                    }
                    result.batches += 1
                    result.expired += n
                    if n < Int(batch) { break }
                }
            }
            // 2. The cap per feed: the threshold is the `maxPerFeed`-th newest row of the feed.
            if retention.maxPerFeed > 0 {
                let cap = Int64(retention.maxPerFeed)
                let over = try await db.read { c in
                    try c.rows("SELECT \(t.feed) FROM \(t.table) GROUP BY \(t.feed) HAVING COUNT(*) > ?", [.int(cap)]) { $0.string(0) }
                }
                for feed in over {
                    guard let threshold = try await db.read({ c in
                        try c.scalarInt("SELECT seq FROM \(t.table) WHERE \(t.feed) = ? ORDER BY seq DESC LIMIT 1 OFFSET ?", [.text(feed), .int(cap)])
                    }) else { continue }
                    let upTo = min(threshold, delivered)  // never an undelivered row
                    while true {
                        let n = try await db.write { c in
                            try c.run("""
                                DELETE FROM \(t.table) WHERE seq IN
                                    (SELECT seq FROM \(t.table) WHERE \(t.feed) = ? AND seq <= ? ORDER BY seq LIMIT ?)
                                """, [.text(feed), .int(upTo), .int(batch)])
                        }
                        result.batches += 1
                        result.overCap += n
                        if n < Int(batch) { break }
                    }
                }
            }
        }
        if result.expired + result.overCap > 0 {
            logger.info("notifications pruned: \(result.expired) past retention, \(result.overCap) past the per-feed cap, in \(result.batches) writes")
        }
        return result
    }
}
