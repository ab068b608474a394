import TSStorage

/// Row readers shared by the services. Each function runs inside a read or write closure of
/// `Database`, on the connection it is given, and issues a bounded number of indexed queries.
enum Readers {
    static let elementColumns = """
        e.id, e.room_id, e.type, e.position_x, e.position_y, e.width, e.height, e.created_by, e.content, \
        e.image_url, e.audio_url, e.video_url, e.thumbnail_url, e.duration, e.created_at, e.updated_at, e.reaction_count
        """

    static func element(_ r: Row) -> Element {
        Element(
            id: r.string(0), roomId: r.string(1), type: ElementType(rawValue: r.string(2)) ?? .note,
            positionX: r.double(3), positionY: r.double(4), width: r.double(5), height: r.double(6),
            createdBy: r.string(7), content: r.optionalString(8), imageUrl: r.optionalString(9),
            audioUrl: r.optionalString(10), videoUrl: r.optionalString(11), thumbnailUrl: r.optionalString(12),
            duration: r.optionalDouble(13), createdAt: r.int(14), updatedAt: r.int(15), reactionCount: r.int(16),
            reactions: nil)
    }

    static func user(_ r: Row, at i: Int32) -> PublicUser {
        let v = PublicUserRow(row: r, at: i)
        return PublicUser(id: v.id.stringValue, username: v.username.stringValue, firstName: v.firstName?.stringValue,
                          avatarUrl: v.avatarUrl?.stringValue)
    }

    static func publicUser(_ c: SQLConnection, id: String) throws -> PublicUser? {
        try c.first("SELECT id, username, first_name, avatar_url FROM users WHERE id = ?", [.text(id)]) { user($0, at: 0) }
    }

    /// The three most recent reactors of an element, newest first (`seq`, then `user_id`: one
    /// heart per user, so the order is total; index reactions_by_element_seq serves it as is).
    static func topReactors(_ c: SQLConnection, elementId: String) throws -> [PublicUser] {
        try c.rows("""
            SELECT u.id, u.username, u.first_name, u.avatar_url FROM reactions r JOIN users u ON u.id = r.user_id
            WHERE r.element_id = ? ORDER BY r.seq DESC, r.user_id DESC LIMIT 3
            """, [.text(elementId)]) { user($0, at: 0) }
    }

    /// The top reactors of every reacted element of a room, in one query, in the order and count
    /// of `topReactors` per element. Per element, the `seq` of its third newest heart is found
    /// by one probe of index reactions_by_element_seq, then the hearts from that `seq` up are
    /// read by one range of the same index: at most three rows per element (more only when
    /// hearts share that `seq`; the order then decides and the rest are dropped here), however
    /// many hearts an element has. A window function (`ROW_NUMBER() OVER (PARTITION BY
    /// element_id …)`) gives the same rows but reads every heart of the room and sorts them; on
    /// SQLite it cost more than the per-element queries it replaced (bench/RESULTS.md, "room:join").
    static func topReactors(_ c: SQLConnection, roomId: String) throws -> [String: [PublicUser]] {
        var out: [String: [PublicUser]] = [:]
        try c.forEachRow("""
            SELECT r.element_id, u.id, u.username, u.first_name, u.avatar_url FROM (
              SELECT e.id, COALESCE((SELECT x.seq FROM reactions x WHERE x.element_id = e.id
                                     ORDER BY x.seq DESC, x.user_id DESC LIMIT 1 OFFSET 2), -9223372036854775808) AS floor
              FROM elements e WHERE e.room_id = ? AND e.reaction_count > 0
            ) t JOIN reactions r ON r.element_id = t.id AND r.seq >= t.floor JOIN users u ON u.id = r.user_id
            ORDER BY r.element_id, r.seq DESC, r.user_id DESC
            """, [.text(roomId)]) { row in
            let element = row.string(0)
            if out[element, default: []].count < 3 { out[element, default: []].append(user(row, at: 1)) }
        }
        return out
    }

    /// One primary-key probe of the reactions table.
    static func hasReacted(_ c: SQLConnection, elementId: String, userId: String) throws -> Bool {
        try c.scalarInt("SELECT 1 FROM reactions WHERE element_id = ? AND user_id = ? AND type = 'heart'",
                        [.text(elementId), .text(userId)]) != nil
    }

    static func stats(_ c: SQLConnection, elementId: String, viewer: String) throws -> ElementStats {
        let count = try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ?", [.text(elementId)]) ?? 0
        return ElementStats(totalReactions: count, hasReacted: try hasReacted(c, elementId: elementId, userId: viewer),
                            topReactors: count > 0 ? try topReactors(c, elementId: elementId) : [])
    }

    /// Attaches `reactions` (for `viewer`) to elements that have any. With `viewerReacted` and
    /// `topReactors` (a whole room's, read once) it runs no query.
    static func attachReactions(_ c: SQLConnection, _ elements: inout [Element], viewer: String, viewerReacted: Set<String>? = nil,
                                topReactors byElement: [String: [PublicUser]]? = nil) throws {
        for i in elements.indices where elements[i].reactionCount > 0 {
            let id = elements[i].id
            let reacted = try viewerReacted.map { $0.contains(id) } ?? hasReacted(c, elementId: id, userId: viewer)
            elements[i].reactions = ElementReactions(count: elements[i].reactionCount, hasReacted: reacted,
                                                     topReactors: try byElement.map { $0[id] ?? [] } ?? topReactors(c, elementId: id))
        }
    }

    static func element(_ c: SQLConnection, id: String, roomId: String, viewer: String) throws -> Element? {
        guard let e = try c.first("SELECT \(elementColumns) FROM elements e WHERE e.id = ? AND e.room_id = ?",
                                  [.text(id), .text(roomId)], element) else { return nil }
        var one = [e]
        try attachReactions(c, &one, viewer: viewer)
        return one[0]
    }

    /// A room's elements, oldest first (`seq`, Migrations/0005), with reactions for `viewer`.
    static func elements(_ c: SQLConnection, roomId: String, viewer: String) throws -> [Element] {
        var list = try c.rows("SELECT \(elementColumns) FROM elements e WHERE e.room_id = ? ORDER BY e.seq, e.id", [.text(roomId)], element)
        if list.contains(where: { $0.reactionCount > 0 }) {
            let reacted = Set(try c.rows("""
                SELECT r.element_id FROM reactions r JOIN elements e ON e.id = r.element_id
                WHERE r.user_id = ? AND e.room_id = ?
                """, [.text(viewer), .text(roomId)]) { $0.string(0) })
            try attachReactions(c, &list, viewer: viewer, viewerReacted: reacted, topReactors: topReactors(c, roomId: roomId))
        }
        return list
    }

    /// A room as its member sees it; columns as `RoomRow` reads them, then the activity order
    /// (14: `last_activity_at`, 15: `activity_seq`).
    static let roomSelect = """
        SELECT r.id, r.name, r.created_by, r.created_at, r.updated_at, r.is_active, r.name_set_by,
               u.id, u.username, u.first_name, u.avatar_url, r.element_count, m.unseen_elements, m.unread_messages,
               r.last_activity_at, r.activity_seq
        FROM room_members m JOIN rooms r ON r.id = m.room_id LEFT JOIN users u ON u.id = r.name_set_by
        """

    static func room(_ r: Row) -> Room {
        let v = RoomRow(row: r)
        return Room(id: v.id.stringValue, name: v.name.stringValue, createdBy: v.createdBy.stringValue,
                    createdAt: v.createdAt, updatedAt: v.updatedAt, isActive: v.isActive, nameSetBy: v.nameSetBy?.stringValue,
                    nameSetByUser: v.nameSetByUser.map { user(r, at: $0.at) }, elementCount: v.elementCount,
                    unseenElements: v.unseenElements, unreadMessages: v.unreadMessages)
    }

    /// The room as `viewer` (a member) sees it; nil when the viewer is not a member.
    static func room(_ c: SQLConnection, id: String, viewer: String) throws -> Room? {
        try c.first("\(roomSelect) WHERE m.room_id = ? AND m.user_id = ?", [.text(id), .text(viewer)], room)
    }

    /// 404 for a room that does not exist, 403 for one the user is not a member of (only members see a room).
    static func requireMember(_ c: SQLConnection, roomId: String, userId: String) throws {
        try check(membership: c.scalarInt("""
            SELECT CASE WHEN EXISTS(SELECT 1 FROM room_members WHERE room_id = ? AND user_id = ?) THEN 2
                        WHEN EXISTS(SELECT 1 FROM rooms WHERE id = ?) THEN 1 ELSE 0 END
            """, [.text(roomId), .text(userId), .text(roomId)]))
    }

    /// 2 member, 1 room without the user, 0 no such room → return, 403, 404.
    static func check(membership state: Int64?) throws {
        switch state {
        case 2: return
        case 1: throw DomainError.forbidden("You are not a member of this room")
        default: throw DomainError.notFound("Room")
        }
    }

    static func memberIds(_ c: SQLConnection, roomId: String) throws -> [String] {
        try c.rows("SELECT user_id FROM room_members WHERE room_id = ?", [.text(roomId)]) { $0.string(0) }
    }
}
