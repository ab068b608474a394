import TSCrypto
import TSStorage
import TSJSON

/// Heart reactions (CONTRACT.md §2 "Reactions"). The toggle is one transaction on the single
/// writer, so racing toggles by one user serialise; the UNIQUE constraint is the backstop.
public struct ReactionService: Sendable {
    let db: Database
    let clock: any WallClock
    let events: any DomainEventPublisher
    let notifier: NotificationWorker

    public func toggle(roomId: String, elementId: String, actor: String, originSocketId: String?) async throws -> ToggleResult {
        let newId = UUIDGenerator.lowercaseV4()
        let now = clock.nowSeconds()
        let result = try await db.write { c -> ToggleResult in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            guard let owner = try c.first("SELECT created_by FROM elements WHERE id = ? AND room_id = ?",
                                          [.text(elementId), .text(roomId)], { $0.string(0) }) else {
                throw DomainError.notFound("Element")
            }
            guard let user = try Readers.publicUser(c, id: actor) else { throw DomainError.unauthorized("Unknown user") }
            let existing = try c.first("SELECT id, created_at FROM reactions WHERE element_id = ? AND user_id = ? AND type = 'heart'",
                                       [.text(elementId), .text(actor)]) { ($0.string(0), $0.int(1)) }
            let action: ToggleResult.Action
            let reaction: Reaction
            if let (id, createdAt) = existing {
                try c.run("DELETE FROM reactions WHERE id = ?", [.text(id)])
                try c.run("UPDATE elements SET reaction_count = reaction_count - 1 WHERE id = ?", [.text(elementId)])
                action = .removed
                reaction = Reaction(id: id, elementId: elementId, userId: actor, createdAt: createdAt, user: user)
            } else {
                try c.run("INSERT INTO reactions (id, element_id, user_id, type, created_at) VALUES (?, ?, ?, 'heart', ?)",
                          [.text(newId), .text(elementId), .text(actor), .int(now)])
                try c.run("UPDATE elements SET reaction_count = reaction_count + 1 WHERE id = ?", [.text(elementId)])
                if owner != actor {
                    try NotificationWorker.insertPersonal(c, userId: owner, roomId: roomId, elementId: elementId, actor: actor, now: now)
                }
                action = .added
                reaction = Reaction(id: newId, elementId: elementId, userId: actor, createdAt: now, user: user)
            }
            let stats = try Readers.stats(c, elementId: elementId, viewer: actor)
            return ToggleResult(action: action, roomId: roomId, reaction: reaction, stats: stats, elementOwner: owner)
        }
        let kind: DomainEventKind = result.action == .added
            ? .reactionAdded(elementId: elementId, reaction: result.reaction, stats: result.stats)
            : .reactionRemoved(elementId: elementId, userId: actor, stats: result.stats)
        await events.publish(DomainEvent(kind: kind, roomId: roomId, actorId: actor, originSocketId: originSocketId))
        if result.action == .added { notifier.wake() }
        return result
    }

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
        try await db.read { c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            guard let total = try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ? AND room_id = ?",
                                              [.text(elementId), .text(roomId)]) else { throw DomainError.notFound("Element") }
            var cursor: (Int64, Int64)? = nil
            if let before {
                guard let cur = try c.first("SELECT created_at, rowid FROM reactions WHERE id = ? AND element_id = ?",
                                            [.text(before), .text(elementId)], { ($0.int(0), $0.int(1)) }) else {
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
            if let (t, rowid) = cursor {
                rows = try c.rows(select + " AND (r.created_at < ? OR (r.created_at = ? AND r.rowid < ?)) ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?",
                                  [.text(elementId), .int(t), .int(t), .int(rowid), .int(Int64(limit))], map)
            } else {
                rows = try c.rows(select + " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?", [.text(elementId), .int(Int64(limit))], map)
            }
            return Page(reactions: rows, total: total, hasReacted: try Readers.hasReacted(c, elementId: elementId, userId: viewer))
        }
    }
}
