import TSCrypto
import TSStorage
import TSJSON

/// Room messages (docs/api.md, "Messages"): what `badges.messages` counts.
public struct MessageService: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource
    let events: any DomainEventPublisher

    public func send(roomId: String, actor: String, input: Input, originSocketId: String?) async throws -> Message {
        let text = try input.string("text", maxLength: 10_000)
        guard !text.trimmingWhitespace().isEmpty else { throw DomainError.validation(field: "text", message: "must not be blank") }
        let id = UUIDGenerator.lowercaseV4()
        let now = clock.nowSeconds()
        let seq = clock.nowMicroseconds()
        let order = sequence.next()
        let message = try await db.write(publishing: events, room: roomId, {
            DomainEvent(kind: .messageCreated($0), roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c -> Message in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            guard let user = try Readers.publicUser(c, id: actor) else { throw DomainError.unauthorized("Unknown user") }
            try c.run("INSERT INTO messages (id, room_id, user_id, text, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)",
                      [.text(id), .text(roomId), .text(actor), .text(text), .int(now), .int(order)])
            try c.run("UPDATE room_members SET unread_messages = unread_messages + 1 WHERE room_id = ? AND user_id != ?",
                      [.text(roomId), .text(actor)])
            try c.run("UPDATE rooms SET last_activity_at = ?, activity_seq = ? WHERE id = ?", [.int(now), .int(seq), .text(roomId)])
            return Message(id: id, roomId: roomId, userId: actor, text: text, createdAt: now, user: user)
        }
        return message
    }

    /// Newest first; `before` is the id of the oldest message of the previous page.
    public func list(roomId: String, viewer: String, limit: Int, before: String?) async throws -> [Message] {
        try await db.read { c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            let select = """
                SELECT m.id, m.user_id, m.text, m.created_at, u.id, u.username, u.first_name, u.avatar_url
                FROM messages m JOIN users u ON u.id = m.user_id WHERE m.room_id = ?
                """
            let map: (Row) -> Message = {
                Message(id: $0.string(0), roomId: roomId, userId: $0.string(1), text: $0.string(2), createdAt: $0.int(3), user: Readers.user($0, at: 4))
            }
            // Newest first in creation order (`seq`, Migrations/0005), `id` breaking a tie of two nodes.
            if let before {
                guard let (seq, id) = try c.first("SELECT seq, id FROM messages WHERE id = ? AND room_id = ?",
                                                  [.text(before), .text(roomId)], { ($0.int(0), $0.string(1)) }) else {
                    throw DomainError.notFound("Message `before` in this room")
                }
                return try c.rows(select + " AND (m.seq < ? OR (m.seq = ? AND m.id < ?)) ORDER BY m.seq DESC, m.id DESC LIMIT ?",
                                  [.text(roomId), .int(seq), .int(seq), .text(id), .int(Int64(limit))], map)
            }
            return try c.rows(select + " ORDER BY m.seq DESC, m.id DESC LIMIT ?", [.text(roomId), .int(Int64(limit))], map)
        }
    }
}
