import TSSync
import Dispatch
import Logging
import TSCrypto
import TSStorage
import TSJSON

/// Delivers a notification to a device; the log delivery is the default (no push gateway here).
public protocol NotificationDelivery: Sendable {
    func deliver(_ notification: NotificationRecord, deviceTokens: [String]) async
}

public struct LogNotificationDelivery: NotificationDelivery {
    let logger: Logger
    public init(logger: Logger) { self.logger = logger }
    public func deliver(_ n: NotificationRecord, deviceTokens: [String]) async {
        logger.debug("push \(n.type.rawValue) to user=\(n.userId) devices=\(deviceTokens.count) room=\(n.roomId ?? "-") element=\(n.elementId ?? "-")")
    }
}

/// Delivers notifications off the request path: rows are written in the transaction of the
/// change, `wake()` is called after the response's write and broadcast, and a background task
/// drains undelivered rows in batches, marking each delivered.
public final class NotificationWorker: @unchecked Sendable {
    // Invariant: `pending`/`running` are only touched while holding `lock`.
    private let lock = Lock()
    private var pending = false
    private var running = false
    private let db: Database
    private let clock: any WallClock
    private let delivery: any NotificationDelivery
    private let logger: Logger
    /// Called after each drained batch (metrics, tests).
    public var onDelivered: (@Sendable (Int) -> Void)?

    public init(db: Database, clock: any WallClock, delivery: any NotificationDelivery, logger: Logger) {
        self.db = db
        self.clock = clock
        self.delivery = delivery
        self.logger = logger
    }

    /// Asks the worker to drain; returns at once.
    public func wake() {
        let start: Bool = lock.withLock {
            pending = true
            if running { return false }
            running = true
            return true
        }
        guard start else { return }
        Task.detached(priority: .background) { [self] in await self.drainLoop() }
    }

    private func drainLoop() async {
        while true {
            let again: Bool = lock.withLock {
                if pending { pending = false; return true }
                running = false
                return false
            }
            guard again else { return }
            do {
                while try await drainBatch() == 100 {}
            } catch {
                logger.error("notification delivery failed: \(error)")
            }
        }
    }

    /// Delivers up to 100 undelivered notifications; returns how many.
    @discardableResult
    public func drainBatch() async throws -> Int {
        let batch: [(NotificationRecord, [String])] = try db.read { c in
            let rows = try c.rows("""
                SELECT id, user_id, type, room_id, element_id, actor_id, created_at FROM notifications
                WHERE delivered_at IS NULL ORDER BY created_at LIMIT 100
                """) {
                NotificationRecord(id: $0.string(0), userId: $0.string(1), type: NotificationRecord.Kind(rawValue: $0.string(2)) ?? .elementCreated,
                                   roomId: $0.optionalString(3), elementId: $0.optionalString(4), actorId: $0.optionalString(5),
                                   createdAt: $0.int(6), deliveredAt: nil)
            }
            return try rows.map { n in (n, try c.rows("SELECT token FROM devices WHERE user_id = ?", [.text(n.userId)]) { $0.string(0) }) }
        }
        guard !batch.isEmpty else { return 0 }
        for (n, tokens) in batch { await delivery.deliver(n, deviceTokens: tokens) }
        let ids = JSONValue.array(batch.map { .string($0.0.id) }).serializedString()
        let now = clock.nowSeconds()
        try await db.write { c in
            try c.run("UPDATE notifications SET delivered_at = ? WHERE id IN (SELECT value FROM json_each(?))", [.int(now), .text(ids)])
        }
        onDelivered?(batch.count)
        return batch.count
    }

    static func insert(_ c: SQLiteConnection, userId: String, kind: NotificationRecord.Kind, roomId: String, elementId: String, actor: String, now: Int64) throws {
        try c.run("INSERT INTO notifications (id, user_id, type, room_id, element_id, actor_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  [.text(UUIDGenerator.lowercaseV4()), .text(userId), .text(kind.rawValue), .text(roomId), .text(elementId), .text(actor), .int(now)])
    }

    /// One notification per member of the room except the actor.
    static func insertForMembers(_ c: SQLiteConnection, roomId: String, actor: String, elementId: String, kind: NotificationRecord.Kind, now: Int64) throws {
        for member in try Readers.memberIds(c, roomId: roomId) where member != actor {
            try insert(c, userId: member, kind: kind, roomId: roomId, elementId: elementId, actor: actor, now: now)
        }
    }

    /// The caller's notifications, newest first.
    public func list(userId: String, limit: Int) throws -> [NotificationRecord] {
        try db.read { c in
            try c.rows("""
                SELECT id, user_id, type, room_id, element_id, actor_id, created_at, delivered_at FROM notifications
                WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?
                """, [.text(userId), .int(Int64(limit))]) {
                NotificationRecord(id: $0.string(0), userId: $0.string(1), type: NotificationRecord.Kind(rawValue: $0.string(2)) ?? .elementCreated,
                                   roomId: $0.optionalString(3), elementId: $0.optionalString(4), actorId: $0.optionalString(5),
                                   createdAt: $0.int(6), deliveredAt: $0.optionalInt(7))
            }
        }
    }
}
