import TSDomain
import TSJSON
import TSRoutes
import TSStorage

/// The whole dataset as one fixture document (`touchsync export`, the inspector's export): what
/// `POST /api/test/fixtures` and `touchsync import` load back. Users keep their login (the stored
/// `passwordHash` instead of a password); rooms, elements, messages and posts use their ids as
/// refs; every list is in creation order (`seq`, Migrations/0005), so an import followed by an export gives the same
/// document up to the new ids.
///
/// Left out, because the fixture format recreates them through the services: timestamps,
/// read/seen markers and badges, notifications (reactions and elements create them again), the
/// counters (`elementCount`, `likeCount`, …). A default room name (never renamed) is not exported,
/// so the import gives the room a fresh default name.
public enum DatasetExporter {
    public static func export(_ db: Database) async throws -> JSONValue {
        try await db.read { c in try document(c) }
    }

    /// Synchronous form for the CLI (no event loop to block).
    public static func document(_ c: SQLConnection) throws -> JSONValue {
        // Users, keyed by username (the ref the loader defaults to).
        var username: [String: String] = [:]
        let users: [JSONValue] = try c.rows("SELECT id, username, password_hash, first_name, avatar_url FROM users ORDER BY seq, id") { r in
            username[r.string(0)] = r.string(1)
            var o: JSONObject = ["username": .string(r.string(1)), "passwordHash": .string(r.string(2))]
            if let f = r.optionalString(3) { o["firstName"] = .string(f) }
            if let a = r.optionalString(4) { o["avatarUrl"] = .string(a) }
            return .object(o)
        }
        func user(_ id: String) -> JSONValue { .string(username[id] ?? id) }

        var members: [String: [String]] = [:]
        for (room, member) in try c.rows("""
            SELECT m.room_id, m.user_id FROM room_members m JOIN users u ON u.id = m.user_id ORDER BY m.joined_at, u.seq, u.id
            """, [], { ($0.string(0), $0.string(1)) }) {
            members[room, default: []].append(member)
        }
        let rooms: [JSONValue] = try c.rows("SELECT id, name, created_by, name_set_by FROM rooms ORDER BY seq, id") { r in
            let id = r.string(0), creator = r.string(2)
            var o: JSONObject = ["ref": .string(id)]
            if !r.isNull(3) { o["name"] = .string(r.string(1)) }
            o["createdBy"] = user(creator)
            o["members"] = .array((members[id] ?? []).filter { $0 != creator }.map(user))
            return .object(o)
        }
        let elements: [JSONValue] = try c.rows("""
            SELECT id, room_id, created_by, type, position_x, position_y, width, height, content, image_url, audio_url, video_url,
                   thumbnail_url, duration FROM elements ORDER BY seq, id
            """) { r in
            var o: JSONObject = ["ref": .string(r.string(0)), "room": .string(r.string(1)), "createdBy": user(r.string(2)),
                                 "type": .string(r.string(3)), "positionX": number(r.double(4)), "positionY": number(r.double(5)),
                                 "width": number(r.double(6)), "height": number(r.double(7))]
            for (i, key) in [(8, "content"), (9, "imageUrl"), (10, "audioUrl"), (11, "videoUrl"), (12, "thumbnailUrl")] {
                if let v = r.optionalString(Int32(i)) { o[key] = .string(v) }
            }
            if let d = r.optionalDouble(13) { o["duration"] = number(d) }
            return .object(o)
        }
        let reactions: [JSONValue] = try c.rows("""
            SELECT x.element_id, x.user_id FROM reactions x JOIN elements e ON e.id = x.element_id ORDER BY e.seq, e.id, x.seq, x.user_id
            """) { .object(["element": .string($0.string(0)), "user": user($0.string(1))]) }
        let messages: [JSONValue] = try c.rows("SELECT id, room_id, user_id, text FROM messages ORDER BY seq, id") {
            .object(["ref": .string($0.string(0)), "room": .string($0.string(1)), "user": user($0.string(2)), "text": .string($0.string(3))])
        }
        let posts: [JSONValue] = try c.rows("SELECT id, author_id, content, image_url FROM posts ORDER BY seq, id") { r in
            var o: JSONObject = ["ref": .string(r.string(0)), "author": user(r.string(1)), "content": .string(r.string(2))]
            if let i = r.optionalString(3) { o["imageUrl"] = .string(i) }
            return .object(o)
        }
        func pairs(_ column: String) throws -> [JSONValue] {
            // Ties (same second) in user creation order, which an import reproduces.
            try c.rows("""
                SELECT t.post_id, t.user_id FROM post_interactions t JOIN posts p ON p.id = t.post_id JOIN users u ON u.id = t.user_id
                WHERE t.\(column) IS NOT NULL ORDER BY p.seq, p.id, t.\(column), u.seq, u.id
                """) {
                .object(["post": .string($0.string(0)), "user": user($0.string(1))])
            }
        }
        let devices: [JSONValue] = try c.rows("SELECT token, user_id, platform FROM devices ORDER BY seq, token") {
            .object(["user": user($0.string(1)), "token": .string($0.string(0)), "platform": .string($0.string(2))])
        }
        return .object([
            "_comment": "A TouchSync dataset (touchsync export): load it with touchsync import FILE or POST /api/test/fixtures. See docs/test-mode.md.",
            "users": .array(users), "rooms": .array(rooms), "elements": .array(elements), "reactions": .array(reactions),
            "messages": .array(messages), "posts": .array(posts), "likes": .array(try pairs("liked_at")),
            "saves": .array(try pairs("saved_at")), "devices": .array(devices),
        ])
    }

    /// Whole numbers as JSON integers (positions are usually integral), the rest as doubles.
    static func number(_ d: Double) -> JSONValue {
        d.rounded() == d && abs(d) < 1e15 ? .int(Int64(d)) : .double(d)
    }
}
