import TSCrypto
import TSStorage
import TSJSON

/// Rooms and membership (docs/api.md, "Rooms"). Only members see or change a room.
public struct RoomService: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource
    let events: any DomainEventPublisher

    public struct Detail: Sendable {
        public let room: Room
        public let members: [PublicUser]
        public let elements: [Element]
        public var json: JSONValue {
            var o = room.jsonObject
            o.appendUnchecked("members", .array(members.map(\.json)))
            o.appendUnchecked("elements", .array(elements.map(\.json)))
            return .object(o)
        }
    }

    public func create(actor: String, input: Input) async throws -> Room {
        let name = try input.optionalString("name", maxLength: 200)
        if let name, name.trimmingWhitespace().isEmpty { throw DomainError.validation(field: "name", message: "must not be blank") }
        let memberIds = try input.optionalStringArray("memberIds") ?? []
        guard memberIds.count <= 100 else { throw DomainError.validation(field: "memberIds", message: "must have at most 100 entries") }
        let id = UUIDGenerator.lowercaseV4()
        let now = clock.nowSeconds()
        let seq = sequence.next()
        return try await db.write { c in
            try c.run("""
                INSERT INTO rooms (id, name, created_by, created_at, updated_at, last_activity_at, activity_seq, name_set_by, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(id), .text(name ?? Timestamp.roomName(now)), .text(actor), .int(now), .int(now), .int(now), .int(seq),
                      name == nil ? .null : .text(actor), .int(seq)])
            for member in Set(memberIds + [actor]) {
                guard try c.scalarInt("SELECT 1 FROM users WHERE id = ?", [.text(member)]) != nil else {
                    throw DomainError.notFound("User \(member)")
                }
                try c.run("""
                    INSERT INTO room_members (room_id, user_id, joined_at, elements_seen_at, messages_read_at) VALUES (?, ?, ?, ?, ?)
                    """, [.text(id), .text(member), .int(now), .int(now), .int(now)])
            }
            guard let room = try Readers.room(c, id: id, viewer: actor) else { throw DomainError.notFound("Room") }
            return room
        }
    }

    /// The caller's rooms with counts and badges, most recently active first: one query.
    public func myRooms(viewer: String) async throws -> [Room] {
        try await db.read { c in
            try c.rows("\(Readers.roomSelect) WHERE m.user_id = ? ORDER BY r.last_activity_at DESC, r.activity_seq DESC",
                       [.text(viewer)], Readers.room)
        }
    }

    public func detail(roomId: String, viewer: String) async throws -> Detail {
        try await db.read { c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            guard let room = try Readers.room(c, id: roomId, viewer: viewer) else { throw DomainError.notFound("Room") }
            let members = try c.rows("""
                SELECT u.id, u.username, u.first_name, u.avatar_url FROM room_members m JOIN users u ON u.id = m.user_id
                WHERE m.room_id = ? ORDER BY m.joined_at, u.username
                """, [.text(roomId)]) { Readers.user($0, at: 0) }
            return Detail(room: room, members: members, elements: try Readers.elements(c, roomId: roomId, viewer: viewer))
        }
    }

    public func rename(roomId: String, actor: String, input: Input, originSocketId: String?) async throws -> Room {
        let name = try input.string("name", maxLength: 200)
        guard !name.trimmingWhitespace().isEmpty else { throw DomainError.validation(field: "name", message: "must not be blank") }
        let now = clock.nowSeconds()
        let seq = clock.nowMicroseconds()
        let room = try await db.write(publishing: events, room: roomId, { (_: Room) in
            DomainEvent(kind: .roomUpdated, roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            try c.run("UPDATE rooms SET name = ?, name_set_by = ?, updated_at = ?, last_activity_at = ?, activity_seq = ? WHERE id = ?",
                      [.text(name), .text(actor), .int(now), .int(now), .int(seq), .text(roomId)])
            guard let room = try Readers.room(c, id: roomId, viewer: actor) else { throw DomainError.notFound("Room") }
            return room
        }
        return room
    }

    public func addMember(roomId: String, actor: String, input: Input) async throws -> PublicUser {
        let userId = try input.optionalString("userId", maxLength: 64)
        let username = try input.optionalString("username", maxLength: 64)
        guard userId != nil || username != nil else { throw DomainError.validation(field: "userId", message: "userId or username is required") }
        let now = clock.nowSeconds()
        return try await db.write { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            let user: PublicUser?
            if let userId {
                user = try Readers.publicUser(c, id: userId)
            } else {
                user = try c.first("SELECT id, username, first_name, avatar_url FROM users WHERE username = ?", [.text(username!)]) {
                    Readers.user($0, at: 0)
                }
            }
            guard let user else { throw DomainError.notFound("User") }
            // The primary key decides a race between two adds of one user (two nodes): 409, never a 500.
            guard try c.run("""
                INSERT INTO room_members (room_id, user_id, joined_at, elements_seen_at, messages_read_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (room_id, user_id) DO NOTHING
                """, [.text(roomId), .text(user.id), .int(now), .int(now), .int(now)]) == 1 else {
                throw DomainError.conflict("User is already a member of this room")
            }
            return user
        }
    }

    public func leave(roomId: String, actor: String) async throws {
        try await db.write { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            try c.run("DELETE FROM room_members WHERE room_id = ? AND user_id = ?", [.text(roomId), .text(actor)])
        }
    }

    /// Resets `badges.elements` for the caller (also done by `room:join`).
    public func markSeen(roomId: String, actor: String) async throws -> Room {
        let now = clock.nowSeconds()
        return try await db.write { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            try Self.markElementsSeen(c, roomId: roomId, userId: actor, now: now)
            guard let room = try Readers.room(c, id: roomId, viewer: actor) else { throw DomainError.notFound("Room") }
            return room
        }
    }

    /// `badges.elements` = 0 for `userId` (also done by `room:join`, `ElementService.join`).
    static func markElementsSeen(_ c: SQLConnection, roomId: String, userId: String, now: Int64) throws {
        try c.run("UPDATE room_members SET unseen_elements = 0, elements_seen_at = ? WHERE room_id = ? AND user_id = ?",
                  [.int(now), .text(roomId), .text(userId)])
    }

    /// Resets `badges.messages` for the caller.
    public func markMessagesRead(roomId: String, actor: String) async throws -> Room {
        let now = clock.nowSeconds()
        return try await db.write { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            try c.run("UPDATE room_members SET unread_messages = 0, messages_read_at = ? WHERE room_id = ? AND user_id = ?",
                      [.int(now), .text(roomId), .text(actor)])
            guard let room = try Readers.room(c, id: roomId, viewer: actor) else { throw DomainError.notFound("Room") }
            return room
        }
    }

    public func isMember(roomId: String, userId: String) async throws -> Bool {
        try await db.read { c in
            try c.scalarInt("SELECT 1 FROM room_members WHERE room_id = ? AND user_id = ?", [.text(roomId), .text(userId)]) != nil
        }
    }

    public func memberIds(roomId: String) async throws -> [String] {
        try await DatabaseRecipientReads(db: db).memberIds(roomId: roomId)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
