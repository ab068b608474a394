import TSStorage
import TSJSON

/// Deleting an account (`DELETE /api/auth/me`) and exporting what is stored about it
/// (`GET /api/auth/me/export`, AccountService+Export.swift).
///
/// A deletion is one write transaction, so nothing commits half: the user's reactions (each
/// element's count moves by −1), elements (each room's count moves by the number removed),
/// messages, likes and saves (the posts' counts move), posts, devices, notifications and
/// memberships go, rooms the user alone belonged to go whole, shared rooms stay (one the user
/// created passes to its earliest remaining member), and the user row goes last. Every table is
/// cleared by its own statement, not by `ON DELETE CASCADE`, so the counters that live beside the
/// rows stay right on both backends. After the commit the other members get the events they would
/// have got had the user removed each heart and element by hand (`element:reaction:removed` with
/// the new stats, `element:deleted` and `element:deleted:global`), so their counts and hearts
/// follow.
///
/// A write racing the deletion from the user's other device cannot leave a row behind: on SQLite
/// the single writer runs it wholly before (and the deletion removes what it wrote) or wholly
/// after (the user's memberships, or the user, are gone: 403/404/401). On PostgreSQL the deletion
/// first locks the user's row (`FOR UPDATE`), which waits for every transaction that inserted a
/// row referencing the user (its foreign-key check holds `FOR KEY SHARE` on that row) and makes
/// every later one wait and then fail its foreign-key check.
public struct AccountService: Sendable {
    let db: Database
    let clock: any WallClock
    let events: any DomainEventPublisher
    let auth: AuthService

    /// What a deletion removed (the response of `DELETE /api/auth/me`).
    public struct Deletion: Sendable {
        public let userId: String
        public var roomsDeleted = 0
        public var elementsDeleted = 0
        public var reactionsDeleted = 0
        public var messagesDeleted = 0
        public var json: JSONValue {
            .object(["userId": .string(userId), "deleted": true, "roomsDeleted": .int(Int64(roomsDeleted)),
                     "elementsDeleted": .int(Int64(elementsDeleted)), "reactionsDeleted": .int(Int64(reactionsDeleted)),
                     "messagesDeleted": .int(Int64(messagesDeleted))])
        }
    }

    /// The events to publish once the deletion has committed.
    private struct Plan: Sendable {
        var deletion: Deletion
        var reactionsRemoved: [(roomId: String, elementId: String, stats: ElementStats)] = []
        var elementsDeleted: [(roomId: String, elementId: String)] = []
        /// Built from the two lists above, numbered, in the transaction.
        var events: [DomainEvent] = []
    }

    /// Deletes `userId` and its personal data after checking `password` (`{"password": …}`): 401
    /// on a wrong one, 400 naming the field when it is missing or not a string. Wrong passwords
    /// count against the login throttle of (username, `clientAddress`), so a stolen token cannot
    /// be used to guess the password faster than a login could (429 with Retry-After).
    public func delete(userId: String, input: Input, clientAddress: String = "") async throws -> Deletion {
        let password = try input.string("password", maxLength: 1024)
        guard let (username, hash) = try await db.read({ c in
            try c.first("SELECT username, password_hash FROM users WHERE id = ?", [.text(userId)]) { ($0.string(0), $0.string(1)) }
        }) else { throw DomainError.unauthorized("Invalid or expired token") }
        let key = LoginThrottle.pair(username: username, address: clientAddress)
        let started = clock.nowSeconds()
        if let wait = auth.throttle.withLock({ $0.retryAfter(key, now: started) }) { throw AuthService.Throttled(retryAfterSeconds: wait) }
        guard await auth.verifyPassword(password, encoded: hash) else {
            auth.throttle.withLock { $0.recordFailure(key, now: started) }
            throw DomainError.unauthorized("Wrong password: the account was not deleted")
        }
        let now = clock.nowSeconds()
        let seq = clock.nowMicroseconds()
        // The events leave in commit order with every other write's (docs/realtime.md "Order"),
        // numbered in this transaction like every other write's.
        let events = self.events
        let plan = try await db.write({ c in
            var plan = try Self.deleteAll(c, userId: userId, now: now, seq: seq)
            plan.events = try Self.numberedEvents(c, plan, userId: userId)
            return plan
        }, committed: { plan in
            for e in plan.events { events.publish(e) }
        })
        return plan.deletion
    }

    /// The deletion's events (hearts removed, then elements deleted), each with its room's number:
    /// the rooms' numbers are taken in room-id order, one `UPDATE` per room, so two transactions
    /// that both touch several rooms lock their rows in the same order.
    private static func numberedEvents(_ c: SQLConnection, _ plan: Plan, userId: String) throws -> [DomainEvent] {
        var events = plan.reactionsRemoved.map {
            DomainEvent(kind: .reactionRemoved(elementId: $0.elementId, userId: userId, stats: $0.stats), roomId: $0.roomId, actorId: userId, originSocketId: nil)
        } + plan.elementsDeleted.map {
            DomainEvent(kind: .elementDeleted(elementId: $0.elementId), roomId: $0.roomId, actorId: userId, originSocketId: nil)
        }
        var perRoom: [String: Int64] = [:]
        for e in events { perRoom[e.roomId, default: 0] += 1 }
        var next: [String: Int64] = [:]
        for (roomId, n) in perRoom.sorted(by: { $0.key < $1.key }) {
            if let last = try RoomEventNumbers.take(c, roomId: roomId, count: n) { next[roomId] = last - n + 1 }
        }
        for i in events.indices {
            guard let n = next[events[i].roomId] else { continue }
            events[i].seq = n
            next[events[i].roomId] = n + 1
        }
        return events
    }

    /// The user's row, locked until the deletion commits (a write of the user's racing it waits).
    static let lockUser = LockingSelect("SELECT id FROM users WHERE id = ?")

    private static func deleteAll(_ c: SQLConnection, userId: String, now: Int64, seq: Int64) throws -> Plan {
        let u = SQLValue.text(userId)
        guard try c.first(Self.lockUser, [u], { $0.string(0) }) != nil else { throw DomainError.unauthorized("Invalid or expired token") }
        var plan = Plan(deletion: Deletion(userId: userId))

        // Rooms nobody else belongs to (the user's own, or ones the user created and everyone left) go whole.
        let soloRooms = try c.rows("""
            SELECT r.id FROM rooms r
            WHERE (r.created_by = ? OR EXISTS(SELECT 1 FROM room_members m WHERE m.room_id = r.id AND m.user_id = ?))
              AND NOT EXISTS(SELECT 1 FROM room_members o WHERE o.room_id = r.id AND o.user_id <> ?)
            """, [u, u, u]) { $0.string(0) }
        let solo = Set(soloRooms)
        for roomId in soloRooms {
            let r = SQLValue.text(roomId)
            plan.deletion.reactionsDeleted += try c.run("DELETE FROM reactions WHERE user_id = ? AND element_id IN (SELECT id FROM elements WHERE room_id = ?)", [u, r])
            try c.run("DELETE FROM reactions WHERE element_id IN (SELECT id FROM elements WHERE room_id = ?)", [r])
            plan.deletion.elementsDeleted += try c.run("DELETE FROM elements WHERE room_id = ? AND created_by = ?", [r, u])
            try c.run("DELETE FROM elements WHERE room_id = ?", [r])
            plan.deletion.messagesDeleted += try c.run("DELETE FROM messages WHERE room_id = ? AND user_id = ?", [r, u])
            try c.run("DELETE FROM messages WHERE room_id = ?", [r])
            try c.run("DELETE FROM room_notifications WHERE room_id = ?", [r])
            try c.run("DELETE FROM room_members WHERE room_id = ?", [r])
            try c.run("DELETE FROM rooms WHERE id = ?", [r])
        }
        plan.deletion.roomsDeleted = soloRooms.count

        // Hearts on other people's elements: each element's count moves by −1 (one heart per user).
        let hearts = try c.rows("""
            SELECT r.element_id, e.room_id FROM reactions r JOIN elements e ON e.id = r.element_id
            WHERE r.user_id = ? AND e.created_by <> ?
            """, [u, u]) { (elementId: $0.string(0), roomId: $0.string(1)) }
        for h in hearts where !solo.contains(h.roomId) {
            try c.run("DELETE FROM reactions WHERE element_id = ? AND user_id = ?", [.text(h.elementId), u])
            let count = try ReactionService.moveCount(c, elementId: h.elementId, by: -1)
            plan.reactionsRemoved.append((h.roomId, h.elementId, ElementStats(
                totalReactions: count, hasReacted: false, topReactors: count > 0 ? try Readers.topReactors(c, elementId: h.elementId) : [])))
        }
        plan.deletion.reactionsDeleted += plan.reactionsRemoved.count

        // The user's elements in shared rooms (with the hearts others gave them).
        let elements = try c.rows("SELECT id, room_id FROM elements WHERE created_by = ? ORDER BY room_id, seq, id", [u]) {
            (roomId: $0.string(1), elementId: $0.string(0))
        }
        try c.run("DELETE FROM reactions WHERE user_id = ?", [u])  // on the user's own elements
        try c.run("DELETE FROM reactions WHERE element_id IN (SELECT id FROM elements WHERE created_by = ?)", [u])
        try c.run("DELETE FROM room_notifications WHERE element_id IN (SELECT id FROM elements WHERE created_by = ?) OR actor_id = ?", [u, u])
        var removedPerRoom: [String: Int64] = [:]
        for e in elements {
            guard try c.run("DELETE FROM elements WHERE id = ?", [.text(e.elementId)]) == 1 else { continue }
            removedPerRoom[e.roomId, default: 0] += 1
            plan.elementsDeleted.append(e)
        }
        for (roomId, n) in removedPerRoom.sorted(by: { $0.key < $1.key }) {
            try c.run("UPDATE rooms SET element_count = element_count - ?, last_activity_at = ?, activity_seq = ? WHERE id = ?",
                      [.int(n), .int(now), .int(seq), .text(roomId)])
        }
        plan.deletion.elementsDeleted += plan.elementsDeleted.count

        plan.deletion.messagesDeleted += try c.run("DELETE FROM messages WHERE user_id = ?", [u])

        // Likes and saves of other people's posts (their counts move), then the user's own posts.
        try c.run("""
            UPDATE posts SET like_count = like_count - 1
            WHERE author_id <> ? AND id IN (SELECT post_id FROM post_interactions WHERE user_id = ? AND liked_at IS NOT NULL)
            """, [u, u])
        try c.run("""
            UPDATE posts SET save_count = save_count - 1
            WHERE author_id <> ? AND id IN (SELECT post_id FROM post_interactions WHERE user_id = ? AND saved_at IS NOT NULL)
            """, [u, u])
        try c.run("DELETE FROM post_interactions WHERE user_id = ? OR post_id IN (SELECT id FROM posts WHERE author_id = ?)", [u, u])
        try c.run("DELETE FROM posts WHERE author_id = ?", [u])

        try c.run("DELETE FROM devices WHERE user_id = ?", [u])
        try c.run("DELETE FROM notifications WHERE user_id = ? OR actor_id = ?", [u, u])
        try c.run("DELETE FROM room_members WHERE user_id = ?", [u])
        // Shared rooms the user created pass to their earliest remaining member.
        try c.run("""
            UPDATE rooms SET created_by = (SELECT m.user_id FROM room_members m WHERE m.room_id = rooms.id
                                           ORDER BY m.joined_at, m.user_id LIMIT 1)
            WHERE created_by = ?
            """, [u])
        try c.run("UPDATE rooms SET name_set_by = NULL WHERE name_set_by = ?", [u])
        guard try c.run("DELETE FROM users WHERE id = ?", [u]) == 1 else { throw DomainError.unauthorized("Invalid or expired token") }
        return plan
    }
}
