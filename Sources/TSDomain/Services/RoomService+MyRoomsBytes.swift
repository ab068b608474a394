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
    /// rows straight into the response body (`envelope` around the array; no `JSONValue` tree, no
    /// `String` per text column: `Readers.RoomRow`), on a reader thread, in the same read that
    /// checks the token's user (one trip off the loop). Returns the caller (for the access log)
    /// and the body.
    ///
    /// The order (`last_activity_at` DESC, `activity_seq` DESC, then the rows' own order) is
    /// applied here, not by an `ORDER BY`: SQLite sorted through a temporary B-tree whose records
    /// carry every selected column (about a quarter of the query's instructions for 50 rooms,
    /// bench/history/2026-11.md "Read paths, round 3"); each room is written once into a scratch buffer
    /// and the objects are copied out in order.
    public func myRoomsJSON(token: VerifiedToken, envelope: JSONEnvelope) async throws -> (user: PublicUser, body: [UInt8]) {
        try await db.read { c in
            // The rooms query needs only the token's user id: on PostgreSQL it travels with the
            // token's user read, one round trip for both (SQLConnection.prefetch).
            c.prefetch(Self.myRoomsSQL, [.text(token.userId)])
            let user = try AuthService.sessionUser(c, token)
            var scratch = JSONBytesWriter(capacity: 32 * 1024)  // ~450 bytes a room: 50 rooms without a regrowth
            var order: [MyRoomsEntry] = []
            order.reserveCapacity(64)
            try c.forEachRow(Self.myRoomsSQL, [.text(user.id)]) { row in
                let room = Readers.RoomRow(row: row)
                let start = scratch.count
                scratch.objectValue { room.writeJSON(into: &$0) }
                order.append(MyRoomsEntry(lastActivityAt: room.lastActivityAt, activitySeq: room.activitySeq,
                                          arrival: order.count, bytes: start..<scratch.count))
            }
            order.sort { a, b in
                if a.lastActivityAt != b.lastActivityAt { return a.lastActivityAt > b.lastActivityAt }
                if a.activitySeq != b.activitySeq { return a.activitySeq > b.activitySeq }
                return a.arrival < b.arrival  // a total order (SQLite: rows arrive by room id, room_members_by_user)
            }
            // The body's size is known: the envelope, `[`, the objects with a comma between
            // each, `]`. They go straight into the body's own array (a writer's `bytes` would
            // copy about 22 KB once more).
            let total = envelope.head.count + 1 + scratch.count + max(order.count - 1, 0) + 1 + envelope.tail.count
            let body = scratch.withBytes { all in
                [UInt8](unsafeUninitializedCapacity: total) { out, written in
                    var at = 0
                    func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                        _ = UnsafeMutableBufferPointer(rebasing: out[at..<(at + bytes.count)]).initialize(from: bytes)
                        at += bytes.count
                    }
                    func put(_ byte: UInt8) {
                        out.initializeElement(at: at, to: byte)
                        at += 1
                    }
                    envelope.head.withUnsafeBufferPointer { put($0) }
                    put(0x5B)
                    for (i, entry) in order.enumerated() {
                        if i > 0 { put(0x2C) }
                        put(UnsafeBufferPointer(rebasing: all[entry.bytes]))
                    }
                    put(0x5D)
                    envelope.tail.withUnsafeBufferPointer { put($0) }
                    precondition(at == total, "my-rooms body size")
                    written = at
                }
            }
            return (user, body)
        }
    }
}

extension RoomService {
    /// The member's rooms in index order (room_members_by_user); sorted in `myRoomsJSON`. One
    /// string for every request: the statement cache finds it without building a new key.
    static let myRoomsSQL = "\(Readers.roomSelect) WHERE m.user_id = ?"
}

/// One room of my-rooms in the scratch buffer: its sort keys and where its object is.
struct MyRoomsEntry {
    let lastActivityAt: Int64
    let activitySeq: Int64
    /// The row's position in the result.
    let arrival: Int
    /// The room's object in the scratch buffer.
    let bytes: Range<Int>
}
