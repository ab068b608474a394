import TSDomain
import TSJSON
import TSRoutes
import TSStorage

/// The inspector's data browser: one page at a time of each kind of row, with
/// keyset paging (`after` = the previous page's `next`, never an OFFSET scan), and — in test or
/// demo mode only — editing an element, deleting rows, reset and loading fixtures.
///
/// Password hashes are never selected. Changes go through the domain services where one exists
/// (an element edit or delete, a reaction removal), so the realtime events and counters are what
/// the API would have produced.
public struct InspectorData: Sendable {
    /// One browsable kind: its SQL (first column: the keyset cursor) and its optional filters.
    struct Kind: Sendable {
        let name: String
        let title: String
        /// `SELECT <cursor>, …` with `%WHERE%` where the filters and the cursor condition go, ordered by the cursor.
        let sql: String
        let cursor: String
        /// A text cursor (`room_members`: its user id); otherwise an integer `seq` (creation order, Migrations/0005).
        let textCursor: Bool
        /// Query parameter → SQL column it filters on.
        let filters: [(String, String)]
        let countSQL: String
        /// The key of a row for `DELETE` (a column of the answer), nil when rows cannot be deleted.
        let key: String?
    }

    static let kinds: [Kind] = [
        Kind(name: "users", title: "Users", sql: """
            SELECT u.seq, u.id, u.username, u.first_name AS \"firstName\", u.avatar_url AS \"avatarUrl\", u.created_at AS \"createdAt\",
              (SELECT COUNT(*) FROM room_members m WHERE m.user_id = u.id) AS rooms,
              (SELECT COUNT(*) FROM devices d WHERE d.user_id = u.id) AS devices
            FROM users u %WHERE% ORDER BY u.seq LIMIT ?
            """, cursor: "u.seq", textCursor: false, filters: [], countSQL: "SELECT COUNT(*) FROM users u %WHERE%", key: "id"),
        Kind(name: "rooms", title: "Rooms", sql: """
            SELECT r.seq, r.id, r.name, r.created_by AS \"createdBy\", (SELECT username FROM users WHERE id = r.created_by) AS \"createdByUsername\",
              (SELECT COUNT(*) FROM room_members m WHERE m.room_id = r.id) AS members, r.element_count AS elements,
              (SELECT COUNT(*) FROM messages g WHERE g.room_id = r.id) AS messages, r.is_active AS \"isActive\",
              r.last_activity_at AS \"lastActivityAt\", r.created_at AS \"createdAt\"
            FROM rooms r %WHERE% ORDER BY r.seq LIMIT ?
            """, cursor: "r.seq", textCursor: false, filters: [], countSQL: "SELECT COUNT(*) FROM rooms r %WHERE%", key: "id"),
        Kind(name: "members", title: "Members", sql: """
            SELECT m.user_id, m.room_id AS \"roomId\", m.user_id AS \"userId\", u.username, m.joined_at AS \"joinedAt\",
              m.unseen_elements AS \"unseenElements\", m.unread_messages AS \"unreadMessages\"
            FROM room_members m JOIN users u ON u.id = m.user_id %WHERE% ORDER BY m.user_id LIMIT ?
            """, cursor: "m.user_id", textCursor: true, filters: [("roomId", "m.room_id")],
             countSQL: "SELECT COUNT(*) FROM room_members m %WHERE%", key: "userId"),
        Kind(name: "elements", title: "Elements", sql: """
            SELECT e.seq, e.id, e.room_id AS \"roomId\", e.type, e.content, e.position_x AS \"positionX\", e.position_y AS \"positionY\",
              e.width, e.height, e.image_url AS \"imageUrl\", e.audio_url AS \"audioUrl\", e.video_url AS \"videoUrl\",
              e.thumbnail_url AS \"thumbnailUrl\", e.duration, e.created_by AS \"createdBy\",
              (SELECT username FROM users WHERE id = e.created_by) AS \"createdByUsername\", e.reaction_count AS reactions,
              e.created_at AS \"createdAt\", e.updated_at AS \"updatedAt\"
            FROM elements e %WHERE% ORDER BY e.seq LIMIT ?
            """, cursor: "e.seq", textCursor: false, filters: [("roomId", "e.room_id")],
             countSQL: "SELECT COUNT(*) FROM elements e %WHERE%", key: "id"),
        Kind(name: "messages", title: "Messages", sql: """
            SELECT g.seq, g.id, g.room_id AS \"roomId\", g.user_id AS \"userId\", (SELECT username FROM users WHERE id = g.user_id) AS username,
              g.text, g.created_at AS \"createdAt\"
            FROM messages g %WHERE% ORDER BY g.seq LIMIT ?
            """, cursor: "g.seq", textCursor: false, filters: [("roomId", "g.room_id")],
             countSQL: "SELECT COUNT(*) FROM messages g %WHERE%", key: "id"),
        Kind(name: "reactions", title: "Reactions", sql: """
            SELECT x.seq, x.id, x.element_id AS \"elementId\", (SELECT room_id FROM elements WHERE id = x.element_id) AS \"roomId\",
              x.user_id AS \"userId\", (SELECT username FROM users WHERE id = x.user_id) AS username, x.type, x.created_at AS \"createdAt\"
            FROM reactions x %WHERE% ORDER BY x.seq LIMIT ?
            """, cursor: "x.seq", textCursor: false, filters: [("elementId", "x.element_id")],
             countSQL: "SELECT COUNT(*) FROM reactions x %WHERE%", key: "id"),
        Kind(name: "posts", title: "Posts", sql: """
            SELECT p.seq, p.id, p.author_id AS \"authorId\", (SELECT username FROM users WHERE id = p.author_id) AS author, p.content,
              p.image_url AS \"imageUrl\", p.like_count AS likes, p.save_count AS saves, p.created_at AS \"createdAt\"
            FROM posts p %WHERE% ORDER BY p.seq LIMIT ?
            """, cursor: "p.seq", textCursor: false, filters: [], countSQL: "SELECT COUNT(*) FROM posts p %WHERE%", key: "id"),
        Kind(name: "devices", title: "Devices", sql: """
            SELECT d.seq, d.token, d.user_id AS \"userId\", (SELECT username FROM users WHERE id = d.user_id) AS username, d.platform,
              d.created_at AS \"createdAt\", d.updated_at AS \"updatedAt\"
            FROM devices d %WHERE% ORDER BY d.seq LIMIT ?
            """, cursor: "d.seq", textCursor: false, filters: [("userId", "d.user_id")],
             countSQL: "SELECT COUNT(*) FROM devices d %WHERE%", key: "token"),
        Kind(name: "notifications", title: "Notifications", sql: """
            SELECT n.seq, n.id, n.user_id AS \"userId\", (SELECT username FROM users WHERE id = n.user_id) AS username, n.type,
              n.room_id AS \"roomId\", n.element_id AS \"elementId\", n.actor_id AS \"actorId\",
              (SELECT username FROM users WHERE id = n.actor_id) AS actor, n.created_at AS \"createdAt\"
            FROM notifications n %WHERE% ORDER BY n.seq LIMIT ?
            """, cursor: "n.seq", textCursor: false, filters: [("userId", "n.user_id")],
             countSQL: "SELECT COUNT(*) FROM notifications n %WHERE%", key: "id"),
        Kind(name: "roomNotifications", title: "Room notifications", sql: """
            SELECT n.seq, n.id, n.room_id AS \"roomId\", n.type, n.element_id AS \"elementId\", n.actor_id AS \"actorId\",
              (SELECT username FROM users WHERE id = n.actor_id) AS actor, n.created_at AS \"createdAt\"
            FROM room_notifications n %WHERE% ORDER BY n.seq LIMIT ?
            """, cursor: "n.seq", textCursor: false, filters: [("roomId", "n.room_id")],
             countSQL: "SELECT COUNT(*) FROM room_notifications n %WHERE%", key: "id"),
    ]

    static func kind(_ name: String) -> Kind? { kinds.first { $0.name == name } }

    let domain: TouchSyncDomain
    /// Largest page (setting `inspector.maxPageSize`).
    let maxPageSize: Int

    init(domain: TouchSyncDomain, maxPageSize: Int) {
        self.domain = domain
        self.maxPageSize = max(1, maxPageSize)
    }

    /// One page of `kind`: `{kind, rows, next, total, limit}`; `next` is null on the last page.
    func page(_ kindName: String, query: [String: String]) async throws -> JSONValue {
        guard let kind = Self.kind(kindName) else {
            // An unknown kind is no resource (404), as an unknown id is.
            throw DomainError.notFound("Kind \(kindName) (one of \(Self.kinds.map(\.name).joined(separator: ", ")))")
        }
        var limit = min(50, maxPageSize)
        if let raw = query["limit"], !raw.isEmpty {
            guard let v = Int(raw), (1...InspectorRoutes.maxQueryLimit).contains(v) else {
                throw DomainError.validation(field: "limit", message: "must be an integer from 1 to \(InspectorRoutes.maxQueryLimit)")
            }
            limit = min(v, maxPageSize)  // a page is at most inspector.maxPageSize rows
        }
        var conditions: [String] = []
        var args: [SQLValue] = []
        for (param, column) in kind.filters {
            if let v = query[param], !v.isEmpty {
                guard v.utf8.count <= 200 else { throw DomainError.validation(field: param, message: "must be at most 200 bytes") }
                conditions.append("\(column) = ?")
                args.append(.text(v))
            }
        }
        let countArgs = args
        let countWhere = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        if let raw = query["after"], !raw.isEmpty {
            if kind.textCursor {
                guard raw.utf8.count <= 200 else { throw DomainError.validation(field: "after", message: "must be at most 200 bytes") }
                args.append(.text(raw))
            } else {
                guard let v = Int64(raw) else { throw DomainError.validation(field: "after", message: "must be the `next` of the previous page") }
                args.append(.int(v))
            }
            conditions.append("\(kind.cursor) > ?")
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = kind.sql.replacingOccurrences(of: "%WHERE%", with: whereClause)
        let countSQL = kind.countSQL.replacingOccurrences(of: "%WHERE%", with: countWhere)
        let queryArgs = args + [.int(Int64(limit + 1))]
        let (rows, total) = try await domain.db.read { c -> ([(cursor: SQLValue, row: JSONObject)], Int64) in
            let rows = try c.rows(sql, queryArgs) { r -> (cursor: SQLValue, row: JSONObject) in
                var o = JSONObject()
                for i in 1..<r.columnCount { o[r.columnName(i)] = Self.json(r.value(i)) }
                return (r.value(0), o)
            }
            return (rows, try c.scalarInt(countSQL, countArgs) ?? 0)
        }
        let shown = rows.prefix(limit)
        var next: JSONValue = .null
        if rows.count > limit, let last = shown.last {
            switch last.cursor {
            case .int(let v): next = .string(String(v))
            case .text(let s): next = .string(s)
            default: break
            }
        }
        return .object([
            "kind": .string(kind.name), "rows": .array(shown.map { .object($0.row) }), "next": next, "total": .int(total),
            "limit": .int(Int64(limit)), "key": .optional(kind.key),
        ])
    }

    static func json(_ v: SQLValue) -> JSONValue {
        switch v {
        case .null: return .null
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .text(let s): return .string(s)
        case .blob(let b): return .string("<\(b.count) bytes>")
        }
    }

    // MARK: changes (test or demo mode)

    /// Edits an element through `ElementService.update` (so `element:updated` is emitted), as a
    /// member of its room: its creator when still a member, else the longest-standing member.
    func editElement(id: String, input: JSONObject) async throws -> JSONValue {
        guard let (roomId, actor) = try await elementActor(id) else { throw DomainError.notFound("Element") }
        guard let actor else { throw DomainError.conflict("the element's room has no member to edit it as") }
        let element = try await domain.elements.update(roomId: roomId, elementId: id, actor: actor, input: Input(input), originSocketId: nil)
        return element.json
    }

    /// Deletes one row of `kind` by its key. Elements go through `ElementService.delete`
    /// (`element:deleted`) and reactions through a toggle by their user (`element:reaction:removed`);
    /// the rest is one `DELETE` (the schema's cascades remove what depends on the row).
    func delete(kindName: String, key: String, roomId: String?) async throws -> JSONValue {
        guard let kind = Self.kind(kindName), kind.key != nil else {
            throw DomainError.validation(field: "kind", message: "rows of \(kindName) cannot be deleted here")
        }
        switch kind.name {
        case "elements":
            guard let (room, actor) = try await elementActor(key) else { throw DomainError.notFound("Element") }
            if let actor {
                try await domain.elements.delete(roomId: room, elementId: key, actor: actor, originSocketId: nil)
            } else {
                try await deleteRow("DELETE FROM elements WHERE id = ?", [.text(key)], what: "Element")
            }
        case "reactions":
            let found = try await domain.db.read { c in
                try c.first("SELECT e.room_id, x.element_id, x.user_id FROM reactions x JOIN elements e ON e.id = x.element_id WHERE x.id = ?",
                            [.text(key)]) { ($0.string(0), $0.string(1), $0.string(2)) }
            }
            guard let (room, element, user) = found else { throw DomainError.notFound("Reaction") }
            _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: user, originSocketId: nil)
        case "members":
            guard let roomId, !roomId.isEmpty else { throw DomainError.validation(field: "roomId", message: "is required to remove a member") }
            try await deleteRow("DELETE FROM room_members WHERE room_id = ? AND user_id = ?", [.text(roomId), .text(key)], what: "Member")
        case "users": try await deleteRow("DELETE FROM users WHERE id = ?", [.text(key)], what: "User")
        case "rooms": try await deleteRow("DELETE FROM rooms WHERE id = ?", [.text(key)], what: "Room")
        case "messages": try await deleteRow("DELETE FROM messages WHERE id = ?", [.text(key)], what: "Message")
        case "posts": try await deleteRow("DELETE FROM posts WHERE id = ?", [.text(key)], what: "Post")
        case "devices": try await deleteRow("DELETE FROM devices WHERE token = ?", [.text(key)], what: "Device")
        case "notifications": try await deleteRow("DELETE FROM notifications WHERE id = ?", [.text(key)], what: "Notification")
        case "roomNotifications": try await deleteRow("DELETE FROM room_notifications WHERE id = ?", [.text(key)], what: "Notification")
        default: throw DomainError.validation(field: "kind", message: "rows of \(kindName) cannot be deleted here")
        }
        return .object(["kind": .string(kind.name), "deleted": .string(key)])
    }

    /// The element's room and the member to act as: its creator when still a member, else the
    /// longest-standing member (nil when the room has none).
    private func elementActor(_ id: String) async throws -> (String, String?)? {
        try await domain.db.read { c in
            try c.first("""
                SELECT e.room_id, COALESCE(
                  (SELECT m.user_id FROM room_members m WHERE m.room_id = e.room_id AND m.user_id = e.created_by),
                  (SELECT m.user_id FROM room_members m WHERE m.room_id = e.room_id ORDER BY m.joined_at, m.user_id LIMIT 1))
                FROM elements e WHERE e.id = ?
                """, [.text(id)]) { ($0.string(0), $0.optionalString(1)) }
        }
    }

    private func deleteRow(_ sql: String, _ args: [SQLValue], what: String) async throws {
        let n = try await domain.db.write { c in try c.run(sql, args) }
        guard n > 0 else { throw DomainError.notFound(what) }
    }
}
