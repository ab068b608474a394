/// Per-room ordered delivery (docs/realtime.md "Order"): the events of one room leave in the
/// order of their room sequence numbers, one at a time, while different rooms are delivered
/// independently. A pure value type (no clock, no threads): its owner keeps it under a lock,
/// passes the time in, and runs one drain per room while `next` answers `.item`.
///
/// Three ways in:
/// - `accept`: the item carries its room's number, taken in the write transaction
///   (`RoomEventNumbers`; with several nodes sharing the database, number order is commit order
///   across nodes). Items may arrive out of order; one that arrives early is held until the items
///   before it arrive, or until the gap has waited `gapWaitNanoseconds`, after which the missing
///   numbers are given up (counted in `skipped`: the event is lost or late). A given-up number
///   that still arrives is delivered next, out of order (`deliveredLate`); any other number below
///   the next one to deliver is a duplicate and is dropped.
/// - `accept(_:after:room:)`: the item goes right after number `after` and takes no number of its
///   own: a `room:join`, whose batch holds every event numbered up to `after`.
/// - `append`: no number. In a room that never had a numbered item the sequence is assigned here,
///   in call order (one node: the writer thread calls it in commit order); in a numbered room the
///   item goes after the highest number seen so far (a flush marker, an event without a number).
///
/// A fresh room (no state: first use, or forgotten while idle) does not know which number comes
/// next. With `freshHoldNanoseconds` > 0 (several nodes: an earlier number may still be on its way
/// from a node with a slower link) its first item waits that long, so that earlier ones arriving
/// meanwhile are delivered before it instead of being taken for duplicates; alone a node sets 0,
/// since its own commits reach it in commit order, and delivery starts at the first number seen.
///
/// Bounded: at most `maxPendingPerRoom` items wait per room; past that `.full` (the owner logs
/// and drops). A number refused that way is known never to come (its one event was just dropped
/// here), so delivery passes over it without waiting for the gap: a burst that overflows a room's
/// queue costs the dropped events, not `gapWaitNanoseconds` for each hole it left. A numbered room's state (the next expected number) outlives idleness, but only for
/// `idleForgetNanoseconds` and for at most `maxRooms` rooms (the longest idle are forgotten first):
/// a forgotten room is fresh again. A room that was never numbered is forgotten as soon as it is idle.
///
/// Inlinable throughout: its one user lives in another module, and a generic type's bodies are
/// only specialized for a concrete `Item` where they are visible. Without that every call ran the
/// unspecialized code (witness-table calls, boxed `Item` copies, generic metadata lookups on each
/// dictionary access), several times the cost of the work itself on every event.
public struct RoomEventSequencer<Item> {
    public enum Admission: Equatable, Sendable {
        /// Queued, and no drain runs for the room (or the one that runs sleeps until a missing
        /// number's deadline, and must not make this item wait that long): the caller must start
        /// one, with the room's `drainID`; a sleeping drain finds itself replaced when it wakes.
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
        /// The next number is missing and later ones wait (or a fresh room holds its first item):
        /// call `next` again at `until` (nanoseconds on the caller's clock), the drain keeps running.
        case waitGap(until: UInt64)
    }

    @usableFromInline
    struct Room {
        @usableFromInline var nextToAssign: Int64 = 1
        @usableFromInline var nextToDeliver: Int64 = 1
        @usableFromInline var held: [Int64: Item] = [:]
        /// Items placed right after a number (key): joins, and unnumbered items of a numbered room.
        @usableFromInline var after: [Int64: [Item]] = [:]
        @usableFromInline var afterCount = 0
        @usableFromInline var draining = false
        /// When delivery started waiting for `nextToDeliver` while later numbers were held.
        @usableFromInline var gapSince: UInt64?
        /// True once a number came from `accept`: the state outlives idleness.
        @usableFromInline var external = false
        /// True until delivery knows where the room's numbers start.
        @usableFromInline var fresh = true
        /// When a fresh room's first item started its hold.
        @usableFromInline var freshSince: UInt64?
        /// The last time the room's drain ran (caller's clock): the least recently active are forgotten first.
        @usableFromInline var lastActive: UInt64 = 0
        /// The drain sleeps on a `.waitGap`.
        @usableFromInline var sleeping = false
        /// Which drain is the room's current one (a new one replaces a sleeping one).
        @usableFromInline var drain: UInt64 = 0
        /// The most recent numbers given up after a gap (at most `maxGivenUpPerRoom`): an event
        /// that still arrives with one of them is delivered late instead of taken for a duplicate.
        @usableFromInline var givenUp: Set<Int64> = []
        /// Numbers refused as `.full` and not yet reached by delivery (at most `maxPendingPerRoom`;
        /// past that a hole waits for the gap like any other).
        @usableFromInline var refused: Set<Int64> = []

        @inlinable var pending: Int { held.count + afterCount }

        @inlinable init() {}
    }

    public let maxPendingPerRoom: Int
    public let gapWaitNanoseconds: UInt64
    public let freshHoldNanoseconds: UInt64
    public let maxRooms: Int
    public let idleForgetNanoseconds: UInt64
    @usableFromInline var rooms: [String: Room] = [:]
    @usableFromInline var lastSweep: UInt64 = 0
    /// Numbers given up after a gap waited too long, over all rooms.
    public var skipped: Int64 { _skipped }
    @usableFromInline var _skipped: Int64 = 0
    /// Items placed after a number that was already delivered (a join whose commit hook ran after a
    /// later event arrived from another node): delivered next, after the events in between.
    public var placedLate: Int64 { _placedLate }
    @usableFromInline var _placedLate: Int64 = 0
    /// Numbered rooms forgotten (idle too long, or the longest idle when `maxRooms` was reached).
    public var forgotten: Int64 { _forgotten }
    @usableFromInline var _forgotten: Int64 = 0
    /// Events that arrived after their number had been given up: delivered next, out of their
    /// room's order (a change that reaches the client late is better than one that never does).
    public var deliveredLate: Int64 { _deliveredLate }
    @usableFromInline var _deliveredLate: Int64 = 0
    /// Given-up numbers remembered per room: a bound on the set, not on how late an event may be.
    public static var maxGivenUpPerRoom: Int { 1024 }

    @inlinable
    public init(maxPendingPerRoom: Int, gapWaitNanoseconds: UInt64, freshHoldNanoseconds: UInt64 = 0,
                maxRooms: Int = 100_000, idleForgetNanoseconds: UInt64 = 600_000_000_000) {
        self.maxPendingPerRoom = max(1, maxPendingPerRoom)
        self.gapWaitNanoseconds = gapWaitNanoseconds
        self.freshHoldNanoseconds = freshHoldNanoseconds
        self.maxRooms = max(1, maxRooms)
        self.idleForgetNanoseconds = idleForgetNanoseconds
    }

    /// Queues `item` as the room's next item (call order is delivery order).
    @inlinable public mutating func append(_ item: Item, room: String) -> (seq: Int64, admission: Admission) {
        var r = take(room)  // taken out: `held` is then not copied on write
        guard r.pending < maxPendingPerRoom else {
            rooms[room] = r
            return (0, .full)
        }
        let seq: Int64
        if r.external {
            seq = r.nextToAssign - 1
            r.after[seq, default: []].append(item)
            r.afterCount += 1
        } else {
            seq = r.nextToAssign
            r.nextToAssign += 1
            r.fresh = false
            r.held[seq] = item
        }
        return (seq, admit(&r, room))
    }

    /// Queues `item` under the number it carries.
    @inlinable public mutating func accept(_ item: Item, seq: Int64, room: String) -> Admission {
        var r = take(room)
        number(&r, startingAt: seq)
        if !r.fresh, seq < r.nextToDeliver, r.givenUp.remove(seq) != nil {
            // Given up while it was on its way (a partition longer than the gap wait): delivered
            // next, after what has already left, rather than dropped.
            guard r.pending < maxPendingPerRoom else {
                r.givenUp.insert(seq)
                rooms[room] = r
                return .full
            }
            r.after[r.nextToDeliver - 1, default: []].append(item)
            r.afterCount += 1
            _deliveredLate += 1
            return admit(&r, room)
        }
        guard r.fresh || seq >= r.nextToDeliver, r.held[seq] == nil else {
            rooms[room] = r
            return .duplicate
        }
        guard r.pending < maxPendingPerRoom else {
            if r.refused.count < maxPendingPerRoom { r.refused.insert(seq) }
            r.nextToAssign = max(r.nextToAssign, seq + 1)
            rooms[room] = r
            return .full
        }
        r.held[seq] = item
        r.nextToAssign = max(r.nextToAssign, seq + 1)
        return admit(&r, room)
    }

    /// Queues `item` right after number `after` (before `after + 1`), taking no number.
    @inlinable public mutating func accept(_ item: Item, after: Int64, room: String) -> Admission {
        var r = take(room)
        // A join read everything numbered up to `after`: where the room's numbers continue is
        // known, so a fresh room needs no hold.
        number(&r, startingAt: after + 1, known: true)
        guard r.pending < maxPendingPerRoom else {
            rooms[room] = r
            return .full
        }
        var key = after
        if !r.fresh && after < r.nextToDeliver - 1 {
            key = r.nextToDeliver - 1
            _placedLate += 1
        }
        r.after[key, default: []].append(item)
        r.afterCount += 1
        r.nextToAssign = max(r.nextToAssign, after + 1)
        return admit(&r, room)
    }

    /// The id of the room's current drain (read with the admission that asked to start one).
    @inlinable public func drainID(room: String) -> UInt64 { rooms[room]?.drain ?? 0 }

    /// What the room's drain does next at time `now`. A drain that was replaced while it slept
    /// (`drain` is not the room's current one) gets `.idle` and ends.
    @inlinable public mutating func next(room: String, now: UInt64, drain: UInt64? = nil) -> Step {
        guard var r = rooms.removeValue(forKey: room) else { return .idle }
        if let drain, drain != r.drain {
            rooms[room] = r
            return .idle
        }
        r.sleeping = false
        r.lastActive = now
        if r.fresh && r.external && r.pending > 0 {
            let since = r.freshSince ?? now
            if now &- since < freshHoldNanoseconds {
                r.freshSince = since
                r.sleeping = true
                rooms[room] = r
                return .waitGap(until: since + freshHoldNanoseconds)
            }
            r.fresh = false
            r.freshSince = nil
            r.nextToDeliver = Self.resumeAt(r)
        }
        while true {
            if let step = Self.deliverNext(&r) {
                rooms[room] = r
                return step
            }
            guard r.pending > 0 else {
                r.draining = false
                r.gapSince = nil
                if r.external { rooms[room] = r }
                sweep(now: now)
                return .idle
            }
            let since = r.gapSince ?? now
            guard now &- since >= gapWaitNanoseconds else {
                r.gapSince = since
                r.sleeping = true
                rooms[room] = r
                return .waitGap(until: since + gapWaitNanoseconds)
            }
            let resume = Self.resumeAt(r)
            _skipped += resume - r.nextToDeliver
            Self.rememberGivenUp(&r, r.nextToDeliver..<resume)
            r.nextToDeliver = resume
            r.refused = r.refused.filter { $0 >= resume }
            r.gapSince = nil
        }
    }

    /// Items waiting in `room`.
    @inlinable public func pending(room: String) -> Int { rooms[room]?.pending ?? 0 }

    /// The items waiting in `room`, in no particular order.
    @inlinable public func pendingItems(room: String) -> [Item] {
        guard let r = rooms[room] else { return [] }
        return Array(r.held.values) + r.after.values.joined()
    }

    /// Rooms with items waiting or a drain running.
    @inlinable public var activeRooms: [String] { rooms.compactMap { $0.value.draining ? $0.key : nil } }

    /// Rooms with state kept (waiting items, a running drain, or `accept`ed numbers).
    @inlinable public var roomCount: Int { rooms.count }

    // MARK: -

    /// The room's state taken out of the table (a new one if it has none; making room for it
    /// when the table is full).
    @inlinable
    mutating func take(_ room: String) -> Room {
        if let r = rooms.removeValue(forKey: room) { return r }
        if rooms.count >= maxRooms { forgetLongestIdle() }
        return Room()
    }

    /// Marks the room numbered. Items appended while it was not are placed before `first`.
    /// `known`: `first` is certainly the next number (no earlier one can still be on its way).
    @inlinable
    func number(_ r: inout Room, startingAt first: Int64, known: Bool = false) {
        guard !r.external else { return }
        r.external = true
        for seq in r.held.keys.sorted() { r.after[first - 1, default: []].append(r.held[seq]!) }
        r.afterCount += r.held.count
        r.held = [:]
        r.fresh = freshHoldNanoseconds > 0 && !known
        r.nextToDeliver = first
        r.nextToAssign = first
    }

    @inlinable
    mutating func admit(_ r: inout Room, _ room: String) -> Admission {
        let admission: Admission
        if r.draining && !r.sleeping {
            admission = .queued
        } else {
            // No drain, or one asleep until a deadline this item may not have to wait for.
            r.draining = true
            r.sleeping = false
            r.drain &+= 1
            admission = .startDrain
        }
        rooms[room] = r
        return admission
    }

    /// The next item if it is there: what was placed after the last delivered number, then the
    /// next number (passing over numbers refused as `.full`: they never come).
    @inlinable
    static func deliverNext(_ r: inout Room) -> Step? {
        while true {
            let last = r.nextToDeliver - 1
            if var list = r.after[last], !list.isEmpty {
                let item = list.removeFirst()
                r.after[last] = list.isEmpty ? nil : list
                r.afterCount -= 1
                return .item(seq: last, item)
            }
            if r.refused.remove(r.nextToDeliver) != nil {
                r.nextToDeliver += 1
                r.gapSince = nil
                continue
            }
            if let item = r.held.removeValue(forKey: r.nextToDeliver) {
                let seq = r.nextToDeliver
                r.nextToDeliver += 1
                r.gapSince = nil
                return .item(seq: seq, item)
            }
            return nil
        }
    }

    /// Keeps the given-up numbers (the highest `maxGivenUpPerRoom` of them, over all gaps).
    @inlinable
    static func rememberGivenUp(_ r: inout Room, _ numbers: Range<Int64>) {
        let cap = Int64(maxGivenUpPerRoom)
        let kept = max(numbers.lowerBound, numbers.upperBound - cap)..<numbers.upperBound
        r.givenUp.formUnion(kept)
        if r.givenUp.count > maxGivenUpPerRoom {
            r.givenUp = Set(r.givenUp.sorted().suffix(maxGivenUpPerRoom))
        }
    }

    /// The number delivery resumes at when the missing ones are given up: the lowest waiting
    /// number, or the one after the lowest number something waits behind.
    @inlinable
    static func resumeAt(_ r: Room) -> Int64 {
        let afterLowest = r.after.keys.min().map { $0 + 1 } ?? .max
        return min(r.held.keys.min() ?? .max, afterLowest)
    }

    /// Forgets numbered rooms idle for `idleForgetNanoseconds`; runs at most twice per that period.
    @inlinable
    mutating func sweep(now: UInt64) {
        guard now &- lastSweep >= idleForgetNanoseconds / 2 else { return }
        lastSweep = now
        let before = rooms.count
        rooms = rooms.filter { $0.value.draining || $0.value.pending > 0 || now &- $0.value.lastActive < idleForgetNanoseconds }
        _forgotten += Int64(before - rooms.count)
    }

    /// The table is full: forgets the longest idle half of the idle rooms (amortised: the next
    /// full table is as many new rooms away).
    @inlinable
    mutating func forgetLongestIdle() {
        let idle = rooms.filter { !$0.value.draining && $0.value.pending == 0 }.sorted { $0.value.lastActive < $1.value.lastActive }
        let n = idle.isEmpty ? 0 : max(1, idle.count / 2)
        for (room, _) in idle.prefix(n) { rooms[room] = nil }
        _forgotten += Int64(n)
    }
}

// A plain value (rooms, counters, queued items): it may cross threads as its items can, e.g.
// inside the broadcaster's lock.
extension RoomEventSequencer: Sendable where Item: Sendable {}
extension RoomEventSequencer.Room: Sendable where Item: Sendable {}
