import TSSync

/// The creation order of rows (Migrations/0005): every table whose order the API or the tools
/// show (users, rooms, elements, messages, reactions, posts, devices) has an app-assigned `seq`
/// instead of SQLite's implicit `rowid`, which PostgreSQL does not have.
///
/// `next()` is a strictly increasing value per process: the wall clock in microseconds, or the
/// previous value plus one when the clock has not moved on (or went back). Why not a database
/// sequence: the value is known before the write (no `RETURNING` round trip, no lock on a shared
/// counter row that every node's inserts would queue on), it is the same code on both backends,
/// and rows migrated from before 0005 keep their order (`seq = rowid`, far below any microsecond
/// value). Across nodes the values interleave by their clocks; equal values (two nodes in the same
/// microsecond) are ordered by `id`, so every listing has a total order and a stable cursor.
public final class SequenceSource: Sendable {
    private let clock: any WallClock
    private let last = LockedValue<Int64>(0)

    public init(clock: any WallClock) { self.clock = clock }

    public func next() -> Int64 {
        let now = clock.nowMicroseconds()
        return last.withLock { last in
            last = now > last ? now : last + 1
            return last
        }
    }
}
