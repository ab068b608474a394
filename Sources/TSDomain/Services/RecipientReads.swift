import TSStorage

/// What the realtime broadcaster reads to address and personalise an event for its recipients:
/// a room's members (global events), who has hearted an element (`hasReacted`), the room as each
/// viewer sees it (badges). Each answer is read before the event enters its room's ordered
/// drain, so the drain itself never waits for the database.
public protocol RecipientReads: Sendable {
    /// The room's members.
    func memberIds(roomId: String) async throws -> [String]
    /// Every user who has hearted the element (a reaction is a room member's; bounded by the room).
    func heartedBy(elementId: String) async throws -> Set<String>
    /// The room as each of `viewers` sees it, in one read; viewers who are not members are left out.
    func rooms(roomId: String, viewers: [String]) async throws -> [String: Room]
}

/// `RecipientReads` from the database's readers.
public struct DatabaseRecipientReads: RecipientReads {
    let db: Database

    public init(db: Database) { self.db = db }

    public func memberIds(roomId: String) async throws -> [String] {
        try await db.read { c in try Readers.memberIds(c, roomId: roomId) }
    }

    public func heartedBy(elementId: String) async throws -> Set<String> {
        // The reactions primary key starts with the element: one index range.
        try await db.read { c in
            Set(try c.rows("SELECT user_id FROM reactions WHERE element_id = ? AND type = 'heart'", [.text(elementId)]) { $0.string(0) })
        }
    }

    public func rooms(roomId: String, viewers: [String]) async throws -> [String: Room] {
        guard !viewers.isEmpty else { return [:] }
        return try await db.read { c in
            var views: [String: Room] = [:]
            for viewer in viewers {
                if let room = try Readers.room(c, id: roomId, viewer: viewer) { views[viewer] = room }
            }
            return views
        }
    }
}
