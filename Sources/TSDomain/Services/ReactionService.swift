import TSCrypto
import TSStorage
import TSJSON

/// Heart reactions (docs/api.md, "Reactions").
///
/// Two toggles racing for the same heart (one user on two nodes, or two sockets) end in a
/// consistent state, never a duplicate row or a 500: the toggle is one transaction that first
/// takes the element's row (`SELECT … FOR UPDATE` on PostgreSQL; SQLite's single writer already
/// serialises every write), so the second toggle of the same element waits for the first to
/// commit and then sees its row. The primary key (element, user, type) is the backstop, and
/// `reaction_count` only ever moves by `± 1` in the statement that also removes or adds the row.
public struct ReactionService: Sendable {
    let deps: ServiceDependencies

    /// The element's author and its heart count when `actor` is a member of its room; locks the
    /// element's row on PostgreSQL (until the transaction ends). Nil: no such element, or not a
    /// member.
    static let lockElement = LockingSelect("""
        SELECT e.created_by, e.reaction_count FROM elements e WHERE e.id = ? AND e.room_id = ?
          AND EXISTS(SELECT 1 FROM room_members m WHERE m.room_id = e.room_id AND m.user_id = ?)
        """, lockingRowsOf: "e")

    /// Adds the caller's heart, or removes it. Per toggle: one statement finds
    /// the element and its count (and checks membership), the heart is deleted if there is one,
    /// else inserted; the count moves by ± 1 in one statement; `hasReacted` is known; the top reactors are one
    /// indexed query. `actorUser` is the caller's row when the request already loaded it
    /// (the REST route's authentication does), so it is not read again.
    public func toggle(roomId: String, elementId: String, actor: String, actorUser: PublicUser? = nil,
                       originSocketId: String?) async throws -> ToggleResult {
        try await toggle(roomId: roomId, elementId: elementId, actor: actor, actorUser: actorUser, session: nil, originSocketId: originSocketId)
    }

    /// The REST toggle: the token's signature and times are already checked
    /// (`AuthService.verifyToken`, no I/O); its user row is read and its version checked inside
    /// the toggle's own write transaction, first (401 before 404/403, as `authenticate` then
    /// `toggle` answered), so a toggle is one trip to the writer thread instead of a reader trip
    /// followed by a writer trip. A revoked token is refused by the same transaction that would
    /// have written: revocation (`logout`) is itself a write, so the two are ordered.
    public func toggle(roomId: String, elementId: String, token: VerifiedToken, originSocketId: String?) async throws -> ToggleResult {
        try await toggle(roomId: roomId, elementId: elementId, actor: token.claims.sub, actorUser: nil, session: token,
                         originSocketId: originSocketId)
    }

    private func toggle(roomId: String, elementId: String, actor: String, actorUser: PublicUser?, session: VerifiedToken?,
                        originSocketId: String?) async throws -> ToggleResult {
        let newId = UUIDGenerator.lowercaseV4()
        let now = deps.clock.nowSeconds()
        let seq = deps.sequence.next()
        // The event (with the count this transaction wrote) is published in commit order by the
        // writer thread: two toggles' events can never reach a client in the other order.
        let result = try await deps.db.write(publishing: deps.events, room: roomId, { (r: ToggleResult) in
            let kind: DomainEventKind = r.action == .added
                ? .reactionAdded(elementId: elementId, reaction: r.reaction, stats: r.stats)
                : .reactionRemoved(elementId: elementId, userId: actor, stats: r.stats)
            return DomainEvent(kind: kind, roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c -> ToggleResult in
            let sessionUser = try session.map { try AuthService.sessionUser(c, $0) }
            guard let (owner, countBefore) = try c.first(Self.lockElement, [.text(elementId), .text(roomId), .text(actor)], {
                ($0.string(0), $0.int(1))
            }) else {
                try Readers.requireMember(c, roomId: roomId, userId: actor)  // 404 room / 403 not a member
                throw DomainError.notFound("Element")
            }
            let user: PublicUser
            if let sessionUser {
                user = sessionUser
            } else if let actorUser, actorUser.id == actor {
                user = actorUser
            } else {
                guard let u = try Readers.publicUser(c, id: actor) else { throw DomainError.unauthorized("Unknown user") }
                user = u
            }
            let action: ToggleResult.Action
            let reaction: Reaction
            let count: Int64
            if let (id, createdAt) = try Self.deleteHeart(c, elementId: elementId, userId: actor) {
                count = try Self.moveCount(c, elementId: elementId, by: -1, from: countBefore)
                action = .removed
                reaction = Reaction(id: id, elementId: elementId, userId: actor, createdAt: createdAt, user: user)
            } else {
                // Under the element's lock no other toggle can have inserted it meanwhile; should a
                // writer that bypasses the toggle have, the caller gets 409, not a duplicate or a 500.
                guard try c.run("""
                    INSERT INTO reactions (element_id, user_id, type, id, seq, created_at) VALUES (?, ?, 'heart', ?, ?, ?)
                    ON CONFLICT (element_id, user_id, type) DO NOTHING
                    """, [.text(elementId), .text(actor), .text(newId), .int(seq), .int(now)]) == 1 else {
                    throw DomainError.conflict("The reaction changed meanwhile; try again")
                }
                count = try Self.moveCount(c, elementId: elementId, by: 1, from: countBefore)
                if owner != actor {
                    try NotificationWorker.insertPersonal(c, userId: owner, roomId: roomId, elementId: elementId, actor: actor, now: now)
                }
                action = .added
                reaction = Reaction(id: newId, elementId: elementId, userId: actor, createdAt: now, user: user)
            }
            let stats = ElementStats(totalReactions: count, hasReacted: action == .added,
                                     topReactors: count > 0 ? try Readers.topReactors(c, elementId: elementId) : [])
            return ToggleResult(action: action, roomId: roomId, reaction: reaction, stats: stats, elementOwner: owner)
        }
        if result.action == .added { deps.notifier.wake() }
        return result
    }

    /// Deletes the caller's heart; its id and time, nil when there was none.
    static func deleteHeart(_ c: SQLConnection, elementId: String, userId: String) throws -> (String, Int64)? {
        try c.run(deleteHeartStatement, [.text(elementId), .text(userId)]) { ($0.string(0), $0.int(1)) }
    }

    static let deleteHeartStatement = ChangeReturning.delete(from: "reactions", where: "element_id = ? AND user_id = ? AND type = 'heart'",
                                                             returning: "id, created_at")

    /// `reaction_count ± 1` in one statement (never read, then written) and the new count.
    static func moveCount(_ c: SQLConnection, elementId: String, by delta: Int64) throws -> Int64 {
        try c.run(moveCountStatement, [.int(delta), .text(elementId)]) { $0.int(0) } ?? 0
    }

    static let moveCountStatement = ChangeReturning.update("elements", set: "reaction_count = reaction_count + ?", where: "id = ?",
                                                           returning: "reaction_count")

    /// `reaction_count ± 1` when the count before is already known: the toggle read it with the
    /// element's row (`lockElement`), and nothing else can move it before this transaction ends
    /// (the row lock on PostgreSQL, the single writer on SQLite), so the new count is
    /// `before + delta` without reading the row again (on SQLite, one statement fewer per toggle).
    /// The `UPDATE` stays relative, as `moveCount(_:elementId:by:)`'s.
    static func moveCount(_ c: SQLConnection, elementId: String, by delta: Int64, from before: Int64) throws -> Int64 {
        try c.run(moveCountChange, [.int(delta), .text(elementId)])
        return before + delta
    }

    static let moveCountChange = "UPDATE elements SET reaction_count = reaction_count + ? WHERE id = ?"

    public struct Page: Sendable {
        public let reactions: [Reaction]
        public let total: Int64
        public let hasReacted: Bool
        public var json: JSONValue {
            .object(["reactions": .array(reactions.map(\.json)), "total": .int(total), "hasReacted": .bool(hasReacted)])
        }
    }

    /// Newest first; `before` is the id of the last reaction of the previous page.
    public func list(roomId: String, elementId: String, viewer: String, limit: Int, before: String?) async throws -> Page {
        try await deps.db.read { c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            guard let total = try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ? AND room_id = ?",
                                              [.text(elementId), .text(roomId)]) else { throw DomainError.notFound("Element") }
            // Newest first: (seq, user_id) descending, one heart per user, so the order is total.
            var cursor: (Int64, String)? = nil
            if let before {
                guard let cur = try c.first("SELECT seq, user_id FROM reactions WHERE id = ? AND element_id = ?",
                                            [.text(before), .text(elementId)], { ($0.int(0), $0.string(1)) }) else {
                    throw DomainError.notFound("Reaction `before` of this element")
                }
                cursor = cur
            }
            let select = """
                SELECT r.id, r.user_id, r.created_at, u.id, u.username, u.first_name, u.avatar_url
                FROM reactions r JOIN users u ON u.id = r.user_id WHERE r.element_id = ?
                """
            let map: (Row) -> Reaction = { Reaction(id: $0.string(0), elementId: elementId, userId: $0.string(1), createdAt: $0.int(2), user: Readers.user($0, at: 3)) }
            let rows: [Reaction]
            if let (seq, user) = cursor {
                rows = try c.rows(select + " AND (r.seq < ? OR (r.seq = ? AND r.user_id < ?)) ORDER BY r.seq DESC, r.user_id DESC LIMIT ?",
                                  [.text(elementId), .int(seq), .int(seq), .text(user), .int(Int64(limit))], map)
            } else {
                rows = try c.rows(select + " ORDER BY r.seq DESC, r.user_id DESC LIMIT ?", [.text(elementId), .int(Int64(limit))], map)
            }
            return Page(reactions: rows, total: total, hasReacted: try Readers.hasReacted(c, elementId: elementId, userId: viewer))
        }
    }
}
