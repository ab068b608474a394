import TSJSON
import TSStorage

/// The bytes of a JSON response around one value: `head` value `tail` (e.g. `{"data":` … `}`).
public struct JSONEnvelope: Sendable {
    public let head: [UInt8]
    public let tail: [UInt8]

    public init(head: [UInt8], tail: [UInt8]) {
        self.head = head
        self.tail = tail
    }
}

extension RoomService {
    /// `GET /api/rooms/my-rooms`: the caller's rooms, most recently active first, written from the
    /// rows straight into the response body (`envelope` around the array; no `JSONValue` tree), on
    /// a reader thread, in the same read that checks the token's user (one trip off the loop).
    /// Returns the caller (for the access log) and the body.
    public func myRoomsJSON(token: VerifiedToken, envelope: JSONEnvelope) async throws -> (user: PublicUser, body: [UInt8]) {
        try await db.read { c in
            let user = try AuthService.sessionUser(c, token)
            var w = JSONBytesWriter(capacity: 32 * 1024)  // ~450 bytes a room: 50 rooms without a regrowth
            w.raw(envelope.head)
            w.raw("[")
            var first = true
            try c.forEachRow("\(Readers.roomSelect) WHERE m.user_id = ? ORDER BY r.last_activity_at DESC, r.activity_seq DESC",
                             [.text(user.id)]) { row in
                w.separator(first: first)
                first = false
                let room = Readers.room(row)
                w.objectValue { room.writeJSON(into: &$0) }
            }
            w.raw("]")
            w.raw(envelope.tail)
            return (user, w.bytes)
        }
    }
}

extension SQLConnection {
    /// Calls `body` for every row of the query (the `Row` is valid only during the call).
    func forEachRow(_ sql: String, _ args: [SQLValue], _ body: (Row) throws -> Void) throws {
        _ = try rows(sql, args) { try body($0) }
    }
}
