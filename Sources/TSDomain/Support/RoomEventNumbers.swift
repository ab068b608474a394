import TSStorage

/// The room's event numbers (`rooms.event_seq`, docs/realtime-cluster.md "Order across nodes"),
/// taken inside the write transaction that produces the events.
///
/// Why in the transaction: the `UPDATE` locks the room's row until COMMIT, so a second transaction
/// about the room (on this node or another sharing the database) takes its numbers only after the
/// first one committed: number order is commit order, per room, across nodes. A transaction that
/// rolls back gives its numbers back, so a number is missing only when its event is lost.
///
/// The same on SQLite, although one node alone needs no numbers (its writer thread already hands
/// events on in commit order): two nodes may share one SQLite file (its write lock then orders
/// them as PostgreSQL's row lock does), and one path for both dialects keeps every write's event
/// numbered the same way. The cost is one `UPDATE` (and on SQLite one primary-key `SELECT`) of a
/// row most of these writes update anyway (element counts, activity); docs/realtime-cluster.md
/// "Order across nodes" has the measured cost. Taken first in the write
/// (`Database.write(publishing:room:)`), so the room's row is locked before its elements' rows.
enum RoomEventNumbers {
    static let advance = ChangeReturning.update("rooms", set: "event_seq = event_seq + ?", where: "id = ?", returning: "event_seq")

    /// The room's row locked until the transaction ends, and its last number: a `room:join`
    /// reads the elements after this, so its batch holds exactly the events numbered up to the
    /// answer (nil: no such room).
    /// The lock is the one `advance` takes (`FOR NO KEY UPDATE`), so a write that already inserted
    /// a row referencing the room (an element) can still take its number after this transaction.
    static let current = LockingSelect.noKeyUpdate("SELECT event_seq FROM rooms WHERE id = ?")

    /// Takes `count` numbers of `roomId`: returns the last one (the first is `last - count + 1`),
    /// nil when the room's row is gone (its events then go unnumbered).
    static func take(_ c: SQLConnection, roomId: String, count: Int64 = 1) throws -> Int64? {
        try c.run(advance, [.int(count), .text(roomId)]) { $0.int(0) }
    }
}
