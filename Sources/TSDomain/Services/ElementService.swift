import TSCrypto
import TSStorage
import TSJSON

/// Canvas elements (docs/api.md, "Elements"). Every write is one transaction that also keeps
/// the room's element count, the other members' unseen badges and the notifications.
public struct ElementService: Sendable {
    let deps: ServiceDependencies

    /// Bounds for positions and sizes, so that a client bug cannot store absurd geometry.
    public static let coordinateRange: ClosedRange<Double> = -1_000_000...1_000_000
    public static let sizeRange: ClosedRange<Double> = 0...100_000
    public static let durationRange: ClosedRange<Double> = 0...86_400
    public static let urlMax = 4096
    public static let contentMax = 100_000

    public func list(roomId: String, viewer: String) async throws -> [Element] {
        try await deps.db.read { c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            return try Readers.elements(c, roomId: roomId, viewer: viewer)
        }
    }

    /// `room:join` (docs/realtime.md "Joining"): the room's elements as `viewer` sees them, read
    /// in the same write transaction that marks them seen (`badges.elements` = 0). `committed`
    /// gets them on the writer thread, in commit order with the room's events
    /// (`Database.write(_:committed:)`), with the room's last event number read under the room's
    /// row lock before the elements (`RoomEventNumbers.current`): the list holds every event
    /// numbered up to it, on any node, and none numbered after it. The join takes no number of its
    /// own: the other nodes never see it, so a number of its own would be a gap they wait for.
    /// 404/403 for non-members.
    public func join(roomId: String, viewer: String, committed: @escaping @Sendable (JoinRead) -> Void) async throws -> [Element] {
        let now = deps.clock.nowSeconds()
        return try await deps.db.write({ c in
            try Readers.requireMember(c, roomId: roomId, userId: viewer)
            let after = try c.first(RoomEventNumbers.current, [.text(roomId)]) { $0.int(0) }
            let elements = try Readers.elements(c, roomId: roomId, viewer: viewer)
            try RoomService.markElementsSeen(c, roomId: roomId, userId: viewer, now: now)
            return JoinRead(elements: elements, afterSeq: after)
        }, committed: committed).elements
    }

    /// What a `room:join` read: the elements, and the room's last event number they include.
    public struct JoinRead: Sendable {
        public let elements: [Element]
        /// Nil when the room's row was gone (the member check passed in the same transaction, so not in practice).
        public let afterSeq: Int64?
    }

    public func create(roomId: String, actor: String, input: Input, originSocketId: String?) async throws -> Element {
        let typeName = try input.string("type", maxLength: 16)
        guard let type = ElementType(rawValue: typeName) else {
            throw DomainError.validation(field: "type", message: "must be one of \(ElementType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let x = try input.number("positionX", in: Self.coordinateRange)
        let y = try input.number("positionY", in: Self.coordinateRange)
        let w = try input.number("width", in: Self.sizeRange)
        let h = try input.number("height", in: Self.sizeRange)
        let content = try input.optionalString("content", maxLength: Self.contentMax)
        let imageUrl = try input.optionalString("imageUrl", maxLength: Self.urlMax)
        let audioUrl = try input.optionalString("audioUrl", maxLength: Self.urlMax)
        let videoUrl = try input.optionalString("videoUrl", maxLength: Self.urlMax)
        let thumbnailUrl = try input.optionalString("thumbnailUrl", maxLength: Self.urlMax)
        let duration = try input.optionalNumber("duration", in: Self.durationRange)
        let id = UUIDGenerator.lowercaseV4()
        let now = deps.clock.nowSeconds()
        let seq = deps.clock.nowMicroseconds()
        let order = deps.sequence.next()
        let element = Element(id: id, roomId: roomId, type: type, positionX: x, positionY: y, width: w, height: h, createdBy: actor,
                              content: content, imageUrl: imageUrl, audioUrl: audioUrl, videoUrl: videoUrl, thumbnailUrl: thumbnailUrl,
                              duration: duration, createdAt: now, updatedAt: now, reactionCount: 0, reactions: nil)
        try await deps.db.write(publishing: deps.events, room: roomId, { (_: Void) in
            DomainEvent(kind: .elementCreated(element), roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            try c.run("""
                INSERT INTO elements (id, room_id, type, position_x, position_y, width, height, created_by, content, image_url,
                                      audio_url, video_url, thumbnail_url, duration, created_at, updated_at, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(id), .text(roomId), .text(type.rawValue), .double(x), .double(y), .double(w), .double(h), .text(actor),
                      .of(content), .of(imageUrl), .of(audioUrl), .of(videoUrl), .of(thumbnailUrl), .of(duration), .int(now), .int(now),
                      .int(order)])
            try c.run("UPDATE rooms SET element_count = element_count + 1, last_activity_at = ?, activity_seq = ? WHERE id = ?",
                      [.int(now), .int(seq), .text(roomId)])
            try c.run("UPDATE room_members SET unseen_elements = unseen_elements + 1 WHERE room_id = ? AND user_id != ?",
                      [.text(roomId), .text(actor)])
            try NotificationWorker.insertForRoom(c, roomId: roomId, elementId: id, actor: actor, now: now)
        }
        deps.notifier.wake()
        return element
    }

    public func update(roomId: String, elementId: String, actor: String, input: Input, originSocketId: String?) async throws -> Element {
        var sets: [String] = []
        var args: [SQLValue] = []
        if input.has("type") {
            let t = try input.string("type", maxLength: 16)
            guard ElementType(rawValue: t) != nil else {
                throw DomainError.validation(field: "type", message: "must be one of \(ElementType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sets.append("type = ?"); args.append(.text(t))
        }
        for (field, column, range) in [("positionX", "position_x", Self.coordinateRange), ("positionY", "position_y", Self.coordinateRange),
                                       ("width", "width", Self.sizeRange), ("height", "height", Self.sizeRange)] where input.has(field) {
            sets.append("\(column) = ?"); args.append(.double(try input.number(field, in: range)))
        }
        for (field, column, max) in [("content", "content", Self.contentMax), ("imageUrl", "image_url", Self.urlMax),
                                     ("audioUrl", "audio_url", Self.urlMax), ("videoUrl", "video_url", Self.urlMax),
                                     ("thumbnailUrl", "thumbnail_url", Self.urlMax)] where input.has(field) {
            sets.append("\(column) = ?"); args.append(.of(try input.optionalString(field, maxLength: max)))
        }
        if input.has("duration") {
            sets.append("duration = ?"); args.append(.of(try input.optionalNumber("duration", in: Self.durationRange)))
        }
        let now = deps.clock.nowSeconds()
        sets.append("updated_at = ?"); args.append(.int(now))
        let sql = "UPDATE elements SET \(sets.joined(separator: ", ")) WHERE id = ? AND room_id = ?"
        let finalArgs = args + [.text(elementId), .text(roomId)]
        let element = try await deps.db.write(publishing: deps.events, room: roomId, {
            DomainEvent(kind: .elementUpdated($0), roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            guard try c.run(sql, finalArgs) == 1 else { throw DomainError.notFound("Element") }
            guard let e = try Readers.element(c, id: elementId, roomId: roomId, viewer: actor) else { throw DomainError.notFound("Element") }
            return e
        }
        return element
    }

    public func delete(roomId: String, elementId: String, actor: String, originSocketId: String?) async throws {
        let now = deps.clock.nowSeconds()
        let seq = deps.clock.nowMicroseconds()
        try await deps.db.write(publishing: deps.events, room: roomId, { (_: Void) in
            DomainEvent(kind: .elementDeleted(elementId: elementId), roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            guard try c.run("DELETE FROM elements WHERE id = ? AND room_id = ?", [.text(elementId), .text(roomId)]) == 1 else {
                throw DomainError.notFound("Element")
            }
            try c.run("UPDATE rooms SET element_count = element_count - 1, last_activity_at = ?, activity_seq = ? WHERE id = ?",
                      [.int(now), .int(seq), .text(roomId)])
        }
    }

    /// Deletes every element of the room; returns how many.
    public func clear(roomId: String, actor: String, originSocketId: String?) async throws -> Int {
        let now = deps.clock.nowSeconds()
        let seq = deps.clock.nowMicroseconds()
        let deleted = try await deps.db.write(publishing: deps.events, room: roomId, {
            DomainEvent(kind: .roomCleared(deleted: $0), roomId: roomId, actorId: actor, originSocketId: originSocketId)
        }) { c in
            try Readers.requireMember(c, roomId: roomId, userId: actor)
            // The room's number (and row lock) came first: a create numbered before this clear
            // committed before its DELETE, and is deleted by it; one numbered after is not.
            let n = try c.run("DELETE FROM elements WHERE room_id = ?", [.text(roomId)])
            // Minus what this statement deleted, not "= 0": on PostgreSQL an element another node
            // creates meanwhile (not seen by this DELETE) keeps its count.
            try c.run("UPDATE rooms SET element_count = element_count - ?, last_activity_at = ?, activity_seq = ? WHERE id = ?",
                      [.int(Int64(n)), .int(now), .int(seq), .text(roomId)])
            return n
        }
        return deleted
    }

    /// One element as `viewer` sees it.
    public func element(roomId: String, elementId: String, viewer: String) async throws -> Element? {
        try await deps.db.read { c in try Readers.element(c, id: elementId, roomId: roomId, viewer: viewer) }
    }

}
