/// Per-room ordered delivery (docs/realtime.md "Order"): the events of one room leave in the
/// order of their room sequence numbers, one at a time, while different rooms are delivered
/// independently. A pure value type (no clock, no threads): its owner keeps it under a lock,
/// passes the time in, and runs one drain per room while `next` answers `.item`.
///
/// Two ways in:
/// - `append`: the sequence is assigned here, in call order. On one node the writer thread
///   calls it in commit order (`Database.write(_:committed:)`), so the room sequence is the
///   commit order and there is never a gap.
/// - `accept`: the item already carries its room sequence (assigned in the write transaction,
///   as several nodes sharing one database need). Items may arrive out of order; one that
///   arrives early is held until the items before it arrive, or until the gap has waited
///   `gapWaitNanoseconds`, after which the missing numbers are given up (a writer that took a
///   number and then rolled back never sends it). A number below the next one to deliver is a
///   duplicate and is dropped.
///
/// Bounded: at most `maxPendingPerRoom` items wait per room; past that `.full` (the owner logs
/// and drops). A room's state is forgotten once it is idle with nothing held, unless its
/// numbers come from `accept` (then the next expected number must be remembered).
public struct RoomEventSequencer<Item> {
    public enum Admission: Equatable, Sendable {
        /// Queued, and no drain runs for the room: the caller must start one.
        case startDrain
        /// Queued behind a running drain.
        case queued
        /// Not queued: the room already has `maxPendingPerRoom` items waiting.
        case full
        /// Not queued: its number was already delivered or is already waiting.
        case duplicate
    }

    public enum Step {
        /// Deliver this next; then call `next` again.
        case item(seq: Int64, Item)
        /// Nothing to deliver now: the drain ends (the next admission answers `.startDrain`).
        case idle
        /// The next number is missing and later ones wait: call `next` again at `until`
        /// (nanoseconds on the caller's clock), the drain keeps running.
        case waitGap(until: UInt64)
    }

    struct Room {
        var nextToAssign: Int64 = 1
        var nextToDeliver: Int64 = 1
        var held: [Int64: Item] = [:]
        var draining = false
        /// When delivery started waiting for `nextToDeliver` while later numbers were held.
        var gapSince: UInt64?
        /// True once a number came from `accept`: the state outlives idleness.
        var external = false
        /// True until the first item: an `accept`ed room starts at the first number it sees.
        var fresh = true
    }

    public let maxPendingPerRoom: Int
    public let gapWaitNanoseconds: UInt64
    private var rooms: [String: Room] = [:]
    /// Numbers given up after a gap waited too long, over all rooms.
    public private(set) var skipped: Int64 = 0

    public init(maxPendingPerRoom: Int, gapWaitNanoseconds: UInt64) {
        self.maxPendingPerRoom = max(1, maxPendingPerRoom)
        self.gapWaitNanoseconds = gapWaitNanoseconds
    }

    /// Queues `item` as the room's next number (call order is delivery order).
    public mutating func append(_ item: Item, room: String) -> (seq: Int64, admission: Admission) {
        var r = rooms.removeValue(forKey: room) ?? Room()  // taken out: `held` is then not copied on write
        guard r.held.count < maxPendingPerRoom else {
            rooms[room] = r
            return (0, .full)
        }
        let seq = r.nextToAssign
        r.nextToAssign += 1
        r.fresh = false
        r.held[seq] = item
        let admission = r.draining ? Admission.queued : .startDrain
        r.draining = true
        rooms[room] = r
        return (seq, admission)
    }

    /// Queues `item` under the number it carries.
    public mutating func accept(_ item: Item, seq: Int64, room: String) -> Admission {
        var r = rooms.removeValue(forKey: room) ?? Room()  // taken out: `held` is then not copied on write
        r.external = true
        if r.fresh {
            r.fresh = false
            r.nextToDeliver = seq
        }
        guard seq >= r.nextToDeliver, r.held[seq] == nil else {
            rooms[room] = r
            return .duplicate
        }
        guard r.held.count < maxPendingPerRoom else {
            rooms[room] = r
            return .full
        }
        r.held[seq] = item
        r.nextToAssign = max(r.nextToAssign, seq + 1)
        let admission = r.draining ? Admission.queued : .startDrain
        r.draining = true
        rooms[room] = r
        return admission
    }

    /// What the room's drain does next at time `now`.
    public mutating func next(room: String, now: UInt64) -> Step {
        guard var r = rooms.removeValue(forKey: room) else { return .idle }
        if let item = r.held.removeValue(forKey: r.nextToDeliver) {
            let seq = r.nextToDeliver
            r.nextToDeliver += 1
            r.gapSince = nil
            rooms[room] = r
            return .item(seq: seq, item)
        }
        guard let lowest = r.held.keys.min() else {
            r.draining = false
            r.gapSince = nil
            if r.external { rooms[room] = r }
            return .idle
        }
        let since = r.gapSince ?? now
        if now &- since >= gapWaitNanoseconds {
            skipped += lowest - r.nextToDeliver
            r.nextToDeliver = lowest
            let item = r.held.removeValue(forKey: lowest)!
            r.nextToDeliver += 1
            r.gapSince = nil
            rooms[room] = r
            return .item(seq: lowest, item)
        }
        r.gapSince = since
        rooms[room] = r
        return .waitGap(until: since + gapWaitNanoseconds)
    }

    /// Items waiting in `room`.
    public func pending(room: String) -> Int { rooms[room]?.held.count ?? 0 }

    /// Rooms with items waiting or a drain running.
    public var activeRooms: [String] { rooms.compactMap { $0.value.draining ? $0.key : nil } }

    /// Rooms with state kept (waiting items, a running drain, or `accept`ed numbers).
    public var roomCount: Int { rooms.count }
}
