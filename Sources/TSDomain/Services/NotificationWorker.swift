import Dispatch
import Logging
import TSCrypto
import TSStorage
import TSSync
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

/// Creates, lists and delivers notifications (Migrations/0002).
///
/// A change writes O(1) rows in its own transaction: one `room_notifications` row for a new
/// element (its audience, the room's other members who joined before it, is resolved when it is
/// listed or delivered) or one `notifications` row for a reaction on someone's element. `wake()`
/// is called after the response's write and broadcast; a background task then hands every row
/// past the delivery cursor to the `NotificationDelivery`, one recipient at a time, and moves the
/// cursors forward in one small write: delivery never runs on a request's path.
public final class NotificationWorker: @unchecked Sendable {
    // Invariant: `pending`/`drain`/`stopped` are only touched while holding `lock`; the rest is
    // immutable after init (`onDelivered` is set once, behind its own lock).
    private let lock = Mutex()
    private var pending = false
    /// The drain under way (nil when idle): `stop` waits for its value.
    private var drain: Task<Void, Never>?
    private var stopped = false
    let db: Database
    let clock: any WallClock
    private let delivery: any NotificationDelivery
    let logger: Logger
    /// Called after each drained batch with the number of deliveries (metrics, tests).
    /// Set once while the server is assembled: the counter it feeds exists after the domain.
    public let onDelivered = SetOnce<@Sendable (Int) -> Void>()

    /// Rows read per table per batch.
    public static let batchSize = 100

    public init(db: Database, clock: any WallClock, delivery: any NotificationDelivery, logger: Logger) {
        self.db = db
        self.clock = clock
        self.delivery = delivery
        self.logger = logger
    }

    // MARK: Writing (inside the change's transaction)

    /// The key of the lock that orders notification inserts (any constant both nodes agree on;
    /// "tsnotify" in ASCII, folded into a bigint).
    static let insertLockKey: Int64 = 0x7473_6e6f_7469_6679

    /// Delivery reads rows past a cursor in `seq` order, so no row may become visible after a row
    /// with a higher `seq` has been delivered. SQLite's single writer commits in `seq` order
    /// already. On PostgreSQL an identity value is drawn at insert time, and two transactions can
    /// commit in the other order (seq 6 visible, the cursor moves past it, then 5 commits and is
    /// never delivered). So on PostgreSQL every transaction that inserts a notification first
    /// takes a transaction-scoped advisory lock (`pg_advisory_xact_lock`, released at COMMIT or
    /// ROLLBACK, after the commit is visible): the inserts and commits are serialised in `seq`
    /// order across every node. Chosen over a "safe horizon" (delivering only below the oldest
    /// in-flight transaction), which needs transaction-id bookkeeping per row; the lock is held
    /// only from the insert to the commit of the same short transaction.
    static func orderInserts(_ c: SQLConnection) throws {
        try c.lockUntilTransactionEnds(key: insertLockKey)
    }

    static func insertPersonal(_ c: SQLConnection, userId: String, roomId: String, elementId: String, actor: String, now: Int64) throws {
        try orderInserts(c)
        try c.run("INSERT INTO notifications (id, user_id, type, room_id, element_id, actor_id, created_at) VALUES (?, ?, 'element_reaction', ?, ?, ?, ?)",
                  [.text(UUIDGenerator.lowercaseV4()), .text(userId), .text(roomId), .text(elementId), .text(actor), .int(now)])
    }

    /// One row for the whole room: every other member is notified of the new element.
    static func insertForRoom(_ c: SQLConnection, roomId: String, elementId: String, actor: String, now: Int64) throws {
        try orderInserts(c)
        try c.run("INSERT INTO room_notifications (id, room_id, type, element_id, actor_id, created_at) VALUES (?, ?, 'element_created', ?, ?, ?)",
                  [.text(UUIDGenerator.lowercaseV4()), .text(roomId), .text(elementId), .text(actor), .int(now)])
    }

    // MARK: Listing

    /// The caller's notifications, newest first: their personal ones and those of the rooms they
    /// are a member of (created by someone else after they joined).
    public func list(userId: String, limit: Int) async throws -> [NotificationRecord] {
        try await db.read { c in
            let cursors = try Self.cursors(c)
            return try c.rows("""
                SELECT id, type, room_id, element_id, actor_id, created_at, CASE WHEN seq <= ? THEN 1 ELSE 0 END, 0 AS kind, seq
                FROM notifications WHERE user_id = ?
                UNION ALL
                SELECT r.id, r.type, r.room_id, r.element_id, r.actor_id, r.created_at, CASE WHEN r.seq <= ? THEN 1 ELSE 0 END, 1 AS kind, r.seq
                FROM room_members m JOIN room_notifications r ON r.room_id = m.room_id AND r.created_at >= m.joined_at
                WHERE m.user_id = ? AND r.actor_id != ?
                ORDER BY 6 DESC, 8 DESC, 9 DESC LIMIT ?
                """, [.int(cursors.user), .text(userId), .int(cursors.room), .text(userId), .text(userId), .int(Int64(limit))]) {
                NotificationRecord(id: $0.string(0), userId: userId, type: NotificationRecord.Kind(rawValue: $0.string(1)) ?? .elementCreated,
                                   roomId: $0.optionalString(2), elementId: $0.optionalString(3), actorId: $0.optionalString(4),
                                   createdAt: $0.int(5), delivered: $0.int(6) == 1)
            }
        }
    }

    // MARK: Delivery

    /// Stops taking new work and waits (bounded) for a drain under way: called on shutdown,
    /// before the database closes. Undelivered rows stay behind the cursor for the next start.
    public func stop(timeoutNanoseconds: UInt64 = 2_000_000_000) async {
        let busy = lock.withLock { () -> Task<Void, Never>? in stopped = true; pending = false; return drain }
        guard let busy else { return }
        // Whichever comes first: the drain's end or the timeout. Two unstructured tasks race to
        // resume one continuation (a task group would wait for the drain even after the timeout);
        // the timer is cancelled when the drain wins, and a drain that outlives the timeout keeps
        // its waiter only until it ends.
        let timer = Task { try? await Task.sleep(nanoseconds: timeoutNanoseconds) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = LockedValue<CheckedContinuation<Void, Never>?>(continuation)
            let resume: @Sendable () -> Void = { once.withLock { c in defer { c = nil }; return c }?.resume() }
            Task { await busy.value; resume() }
            Task { await timer.value; resume() }
        }
        timer.cancel()
    }

    /// Asks the worker to drain; returns at once.
    public func wake() {
        lock.withLock {
            if stopped { return }
            pending = true
            if drain != nil { return }
            drain = Task.detached(priority: .background) { [self] in await self.drainLoop() }
        }
    }

    private func drainLoop() async {
        while true {
            let again: Bool = lock.withLock {
                if pending { pending = false; return true }
                drain = nil
                return false
            }
            guard again else { return }
            do {
                while try await drainBatch() > 0 {}
            } catch {
                logger.error("notification delivery failed: \(error)")
            }
        }
    }

    private struct Batch {
        var deliveries: [(NotificationRecord, [String])] = []
        var userCursor: Int64
        var roomCursor: Int64
        var rows = 0
    }

    /// Delivers up to `batchSize` rows of each table past their cursors; returns how many rows it
    /// consumed (0 when there was nothing to do).
    @discardableResult
    public func drainBatch() async throws -> Int {
        let batch: Batch = try await db.read { c in
            let cursors = try Self.cursors(c)
            var b = Batch(userCursor: cursors.user, roomCursor: cursors.room)
            let limit = Int64(Self.batchSize)
            _ = try c.rows("""
                SELECT seq, id, user_id, room_id, element_id, actor_id, created_at FROM notifications WHERE seq > ? ORDER BY seq LIMIT ?
                """, [.int(cursors.user), .int(limit)]) { r in
                b.userCursor = r.int(0)
                b.rows += 1
                b.deliveries.append((NotificationRecord(id: r.string(1), userId: r.string(2), type: .elementReaction, roomId: r.optionalString(3),
                                                        elementId: r.optionalString(4), actorId: r.optionalString(5), createdAt: r.int(6),
                                                        delivered: true), []))
            }
            let roomRows = try c.rows("""
                SELECT seq, id, room_id, element_id, actor_id, created_at FROM room_notifications WHERE seq > ? ORDER BY seq LIMIT ?
                """, [.int(cursors.room), .int(limit)]) { r in
                (seq: r.int(0), id: r.string(1), room: r.string(2), element: r.optionalString(3), actor: r.optionalString(4), at: r.int(5))
            }
            for n in roomRows {
                b.roomCursor = n.seq
                b.rows += 1
                let audience = try c.rows("SELECT user_id FROM room_members WHERE room_id = ? AND user_id != ? AND joined_at <= ?",
                                          [.text(n.room), .of(n.actor), .int(n.at)]) { $0.string(0) }
                for member in audience {
                    b.deliveries.append((NotificationRecord(id: n.id, userId: member, type: .elementCreated, roomId: n.room, elementId: n.element,
                                                            actorId: n.actor, createdAt: n.at, delivered: true), []))
                }
            }
            // Device tokens of every recipient, in one query.
            let users = Array(Set(b.deliveries.map(\.0.userId)))
            if !users.isEmpty {
                var tokens: [String: [String]] = [:]
                for chunk in SQLList.chunks(users) {
                    _ = try c.rows("SELECT user_id, token FROM devices WHERE user_id IN (\(SQLList.placeholders(chunk.count)))",
                                   chunk.map { SQLValue.text($0) }) { r in
                        tokens[r.string(0), default: []].append(r.string(1))
                    }
                }
                for i in b.deliveries.indices { b.deliveries[i].1 = tokens[b.deliveries[i].0.userId] ?? [] }
            }
            return b
        }
        guard batch.rows > 0 else { return 0 }
        for (n, tokens) in batch.deliveries { await delivery.deliver(n, deviceTokens: tokens) }
        let (u, r) = (batch.userCursor, batch.roomCursor)
        try await db.write { c in
            try c.run("""
                INSERT INTO notification_cursors (name, delivered_seq) VALUES ('user', ?), ('room', ?)
                ON CONFLICT (name) DO UPDATE SET delivered_seq = CASE WHEN excluded.delivered_seq > notification_cursors.delivered_seq
                    THEN excluded.delivered_seq ELSE notification_cursors.delivered_seq END
                """, [.int(u), .int(r)])
        }
        onDelivered.value?(batch.deliveries.count)
        return batch.rows
    }

    static func cursors(_ c: SQLConnection) throws -> (user: Int64, room: Int64) {
        let row = try c.first("""
            SELECT (SELECT delivered_seq FROM notification_cursors WHERE name = 'user'),
                   (SELECT delivered_seq FROM notification_cursors WHERE name = 'room')
            """) { ($0.optionalInt(0) ?? 0, $0.optionalInt(1) ?? 0) }
        return row ?? (0, 0)
    }
}
