import TSStorage
import TSJSON

extension AccountService {
    /// Rows one section of an export holds at most; a section that reaches it says so in `truncated`.
    public static let exportMaxRowsPerSection = 50_000

    /// Everything stored about `userId` (`GET /api/auth/me/export`): the profile (never the password
    /// hash), rooms, memberships, elements, reactions, messages, posts, likes, saves, devices and
    /// notifications, read in one read transaction (one consistent snapshot).
    public func export(userId: String) async throws -> JSONValue {
        let exportedAt = Timestamp.iso8601(clock.nowSeconds())
        return try await db.read { c in
            let u = SQLValue.text(userId)
            let limit = SQLValue.int(Int64(Self.exportMaxRowsPerSection))
            guard let profile = try c.first("SELECT id, username, first_name, avatar_url, created_at FROM users WHERE id = ?", [u], { r in
                JSONValue.object(["id": .string(r.string(0)), "username": .string(r.string(1)), "firstName": r.optionalString(2).map(JSONValue.string) ?? .null,
                                  "avatarUrl": r.optionalString(3).map(JSONValue.string) ?? .null, "createdAt": .string(Timestamp.iso8601(r.int(4)))])
            }) else { throw DomainError.unauthorized("Invalid or expired token") }
            var truncated: [JSONValue] = []
            func section(_ name: String, _ sql: String, _ map: (Row) -> JSONValue) throws -> JSONValue {
                let rows = try c.rows(sql + " LIMIT ?", [u, limit], map)
                if rows.count >= Self.exportMaxRowsPerSection { truncated.append(.string(name)) }
                return .array(rows)
            }
            func time(_ r: Row, _ i: Int32) -> JSONValue { .string(Timestamp.iso8601(r.int(i))) }
            func text(_ r: Row, _ i: Int32) -> JSONValue { r.optionalString(i).map(JSONValue.string) ?? .null }

            var out: JSONObject = ["exportedAt": .string(exportedAt), "user": profile]
            out["rooms"] = try section("rooms", Readers.roomSelect + " WHERE m.user_id = ? ORDER BY r.created_at, r.id") { Readers.room($0).json }
            out["memberships"] = try section("memberships", """
                SELECT room_id, joined_at, elements_seen_at, messages_read_at, unseen_elements, unread_messages
                FROM room_members WHERE user_id = ? ORDER BY joined_at, room_id
                """) { r in
                .object(["roomId": .string(r.string(0)), "joinedAt": time(r, 1), "elementsSeenAt": time(r, 2), "messagesReadAt": time(r, 3),
                         "unseenElements": .int(r.int(4)), "unreadMessages": .int(r.int(5))])
            }
            out["elements"] = try section("elements", "SELECT \(Readers.elementColumns) FROM elements e WHERE e.created_by = ? ORDER BY e.seq, e.id") {
                Readers.element($0).json
            }
            out["reactions"] = try section("reactions", """
                SELECT r.id, r.element_id, e.room_id, r.type, r.created_at FROM reactions r JOIN elements e ON e.id = r.element_id
                WHERE r.user_id = ? ORDER BY r.seq, r.id
                """) { r in
                .object(["id": .string(r.string(0)), "elementId": .string(r.string(1)), "roomId": .string(r.string(2)),
                         "type": .string(r.string(3)), "createdAt": time(r, 4)])
            }
            out["messages"] = try section("messages", "SELECT id, room_id, text, created_at FROM messages WHERE user_id = ? ORDER BY seq, id") { r in
                .object(["id": .string(r.string(0)), "roomId": .string(r.string(1)), "text": .string(r.string(2)), "createdAt": time(r, 3)])
            }
            out["posts"] = try section("posts", "SELECT id, content, image_url, like_count, save_count, created_at FROM posts WHERE author_id = ? ORDER BY seq, id") { r in
                .object(["id": .string(r.string(0)), "content": .string(r.string(1)), "imageUrl": text(r, 2), "likeCount": .int(r.int(3)),
                         "saveCount": .int(r.int(4)), "createdAt": time(r, 5)])
            }
            for (name, column) in [("likes", "liked_at"), ("saves", "saved_at")] {
                out[name] = try section(name, """
                    SELECT post_id, \(column) FROM post_interactions WHERE user_id = ? AND \(column) IS NOT NULL ORDER BY \(column), post_id
                    """) { r in
                    .object(["postId": .string(r.string(0)), "createdAt": time(r, 1)])
                }
            }
            out["devices"] = try section("devices", "SELECT token, platform, created_at, updated_at FROM devices WHERE user_id = ? ORDER BY created_at, token") { r in
                .object(["token": .string(r.string(0)), "platform": .string(r.string(1)), "createdAt": time(r, 2), "updatedAt": time(r, 3)])
            }
            out["notifications"] = try section("notifications", """
                SELECT id, type, room_id, element_id, actor_id, created_at FROM notifications WHERE user_id = ? ORDER BY seq
                """) { r in
                .object(["id": .string(r.string(0)), "type": .string(r.string(1)), "roomId": text(r, 2), "elementId": text(r, 3),
                         "actorId": text(r, 4), "createdAt": time(r, 5)])
            }
            out["truncated"] = .array(truncated)
            return .object(out)
        }
    }
}
