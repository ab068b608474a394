import TSDomain

/// One entry of a node's delivery journal (docs/realtime-cluster.md, "Connection state recovery
/// across nodes"): a room event this node's broadcaster processed, or a `room:join` it delivered,
/// with `first` and `counter`, the node's recovery offset counters of its first and last emits. A
/// client whose last offset counter is C had, on that node, everything journalled from `first` at
/// or below C.
public struct RecoveryJournalEntry: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case event = "e"
        case join = "j"
    }

    /// The node's own numbering of its entries, 1, 2, 3, …: a hole is an entry whose write was lost.
    public let number: Int64
    /// The node's offset counter at its first emit: a client whose last offset is at least this
    /// got the event (its packets to one socket leave in one write).
    public let first: UInt64
    public let counter: UInt64
    public let roomId: String
    /// The room's event number (`DomainEvent.seq`); for a join, the last number its read holds.
    public let seq: Int64
    public let kind: Kind
    /// For a join, the socket that joined.
    public let sid: String?
    /// Wall clock, milliseconds since 1970.
    public let ms: Int64

    public init(number: Int64, first: UInt64? = nil, counter: UInt64, roomId: String, seq: Int64, kind: Kind, sid: String?, ms: Int64) {
        self.number = number
        self.first = first ?? counter
        self.counter = counter
        self.roomId = roomId
        self.seq = seq
        self.kind = kind
        self.sid = sid
        self.ms = ms
    }

    /// The stream entry's fields (`XADD … n <number> c <counter> …`).
    public var fields: [(String, String)] {
        var f = [("n", String(number)), ("f", String(first)), ("c", String(counter)), ("r", roomId), ("s", String(seq)), ("k", kind.rawValue), ("t", String(ms))]
        if let sid { f.append(("i", sid)) }
        return f
    }

    /// From a stream entry's fields; nil when one is missing or malformed.
    public init?(fields: [String: String]) {
        guard let n = fields["n"].flatMap({ Int64($0) }), let c = fields["c"].flatMap({ UInt64($0) }), let r = fields["r"],
              let s = fields["s"].flatMap({ Int64($0) }), let k = fields["k"].flatMap(Kind.init(rawValue:)),
              let t = fields["t"].flatMap({ Int64($0) }) else { return nil }
        self.init(number: n, first: fields["f"].flatMap { UInt64($0) }, counter: c, roomId: r, seq: s, kind: k, sid: fields["i"], ms: t)
    }
}

/// A room event this node processed, as the recovery ring keeps it.
public struct RecoveryRingItem: Sendable, Equatable {
    public let event: DomainEvent
    /// Wall clock at processing, milliseconds since 1970.
    public let ms: Int64
}

/// Which of this node's recent events a session of another node missed. Pure.
///
/// Per room, the other node processed the room's events in room order (`seq`), as this one does.
/// The highest number it had processed when the client got its last packet is the client's place
/// in the room: the events above it are the missed ones. A room the other node journalled only
/// after the client's last packet starts at its first such entry; a room it never journalled is
/// placed by time (the events this node processed after the journal's oldest entry; clock skew
/// between the nodes matters only at that edge).
public enum RecoveryPlan {
    public enum Failure: String, Error, Sendable {
        case journalEmpty = "the other node's delivery journal is empty or gone"
        case journalTailLost = "the other node's delivery journal ends before the client's last offset (its last writes were lost)"
        case journalHole = "the other node's delivery journal has a hole (writes lost on the way to Redis)"
        case joinNotDelivered = "the session joined a room after its last offset (the join's elements never reached it)"
        case ringTooShort = "this node no longer keeps (or never had) every event since the client's last offset"
    }

    /// - Parameters:
    ///   - journal: the other node's journal, in its order (oldest first).
    ///   - counter: the counter of the client's last offset.
    ///   - sid: the session's socket id (its own joins count).
    ///   - ring: this node's kept events, in processing order.
    ///   - ringSinceMs: the ring holds every event this node processed since then.
    /// What a restore does: replay `missed` (in this order), and keep from the session the room
    /// events numbered up to `delivered[room]` that this node has yet to process (the other node
    /// had them out before this one).
    public struct Plan: Sendable, Equatable {
        public let missed: [DomainEvent]
        public let delivered: [String: Int64]
    }

    public static func missed(journal: [RecoveryJournalEntry], counter: UInt64, sid: String, ring: [RecoveryRingItem],
                              ringSinceMs: Int64) -> Result<Plan, Failure> {
        guard let oldest = journal.first else { return .failure(.journalEmpty) }
        for (a, b) in zip(journal, journal.dropFirst()) where b.number != a.number + 1 { return .failure(.journalHole) }
        guard journal.contains(where: { $0.counter >= counter }) else { return .failure(.journalTailLost) }
        var placed: [String: Int64] = [:]
        var firstAfter: [String: Int64] = [:]
        var lastSeenMs = oldest.ms
        for e in journal {
            let mine = e.kind == .event || e.sid == sid
            // Delivered when the client's last packet is one of its own or later: one event's
            // packets to a socket leave in one write (`SocketIOServer.emit`).
            if e.kind == .join && e.sid == sid && e.first > counter { return .failure(.joinNotDelivered) }
            if e.first <= counter {
                lastSeenMs = max(lastSeenMs, e.ms)
                if mine { placed[e.roomId] = max(placed[e.roomId] ?? e.seq, e.seq) }
            } else if e.kind == .event {
                firstAfter[e.roomId] = min(firstAfter[e.roomId] ?? e.seq, e.seq)
            }
        }
        guard ringSinceMs < lastSeenMs else { return .failure(.ringTooShort) }
        var out: [DomainEvent] = []
        for item in ring {
            let e = item.event
            if let seq = e.seq, let at = placed[e.roomId] {
                if seq > at { out.append(e) }
            } else if let seq = e.seq, let first = firstAfter[e.roomId] {
                if seq >= first { out.append(e) }
            } else if item.ms > oldest.ms {
                out.append(e)
            }
        }
        return .success(Plan(missed: out, delivered: placed))
    }
}

/// This node's recent room events, for sessions of other nodes to recover from (`RecoveryPlan`):
/// bounded by count and age, oldest dropped first. A pure value.
struct RecoveryRing {
    let maxCount: Int
    let maxAgeMs: Int64
    private var items: [RecoveryRingItem] = []
    private var start = 0
    /// Every event processed since then is here (the newest dropped one's time, or the start).
    private(set) var sinceMs: Int64

    init(maxCount: Int, maxAgeMs: Int64, startMs: Int64) {
        self.maxCount = max(1, maxCount)
        self.maxAgeMs = max(1, maxAgeMs)
        sinceMs = startMs
    }

    var count: Int { items.count - start }
    var snapshot: [RecoveryRingItem] { Array(items[start...]) }

    mutating func append(_ event: DomainEvent, ms: Int64) {
        items.append(RecoveryRingItem(event: event, ms: ms))
        while count > maxCount || (count > 0 && ms - items[start].ms > maxAgeMs) {
            sinceMs = max(sinceMs, items[start].ms)
            start += 1
        }
        if start > 1024 && start * 2 > items.count {
            items.removeFirst(start)
            start = 0
        }
    }
}
