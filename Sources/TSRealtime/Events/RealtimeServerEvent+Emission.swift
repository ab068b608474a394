import TSDomain
import TSJSON

/// One kind of domain change (`DomainEventKind` without its values) and how to read its values:
/// what a server → client event's emission rule names as its cause. `index` places the kind in
/// the broadcaster's dispatch table (`RealtimeEmissionTable`), so finding an event's rules is an
/// array subscript, never a lookup by name.
struct DomainChange<Values>: Sendable {
    let index: Int
    let values: @Sendable (DomainEventKind) -> Values?
}

/// The kinds of `DomainEventKind`, each with its values.
enum DomainChanges {
    static let elementCreated = DomainChange<Element>(index: 0) { if case .elementCreated(let e) = $0 { e } else { nil } }
    static let elementUpdated = DomainChange<Element>(index: 1) { if case .elementUpdated(let e) = $0 { e } else { nil } }
    static let elementDeleted = DomainChange<String>(index: 2) { if case .elementDeleted(let id) = $0 { id } else { nil } }
    static let roomCleared = DomainChange<Int>(index: 3) { if case .roomCleared(let n) = $0 { n } else { nil } }
    static let roomUpdated = DomainChange<Void>(index: 4) { if case .roomUpdated = $0 { () } else { nil } }
    static let messageCreated = DomainChange<Message>(index: 5) { if case .messageCreated(let m) = $0 { m } else { nil } }
    static let reactionAdded = DomainChange<(elementId: String, reaction: Reaction, stats: ElementStats)>(index: 6) {
        if case .reactionAdded(let id, let r, let s) = $0 { (id, r, s) } else { nil }
    }
    static let reactionRemoved = DomainChange<(elementId: String, userId: String, stats: ElementStats)>(index: 7) {
        if case .reactionRemoved(let id, let u, let s) = $0 { (id, u, s) } else { nil }
    }

    static let count = 8

    /// The index of the change `kind` is (exhaustive: a new kind does not compile until it has one).
    @inline(__always)
    static func index(_ kind: DomainEventKind) -> Int {
        switch kind {
        case .elementCreated: return 0
        case .elementUpdated: return 1
        case .elementDeleted: return 2
        case .roomCleared: return 3
        case .roomUpdated: return 4
        case .messageCreated: return 5
        case .reactionAdded: return 6
        case .reactionRemoved: return 7
        }
    }
}

/// How a server → client event is emitted (docs/realtime.md "Server → client"): which domain
/// change produces it, to whom, and its payload built from the domain event (and, per recipient,
/// from what the broadcaster read before the event's turn, `RecipientData`). The broadcaster has
/// no code per event: it runs these rules (`RealtimeBroadcaster+Emission.swift`).
struct RealtimeEmission<Payload: RealtimeOutbound>: Sendable {
    let audience: RealtimeAudience
    /// Nil for an event no domain change produces (`elements:batch`, sent by a `room:join`).
    let rule: EmissionRule.Shape?
    let change: Int?

    /// The answer to a `room:join`, to its socket (the broadcaster's join delivery sends it).
    static var joiningSocket: Self { Self(audience: .joiningSocket, rule: nil, change: nil) }

    /// To the room's sockets except the originating one; one payload for all, encoded once.
    static func room<V>(on change: DomainChange<V>, _ build: @escaping @Sendable (DomainEvent, V) -> Payload) -> Self {
        Self(audience: .room, rule: .room { e in change.values(e.kind).map { [build(e, $0).wireJSON] } }, change: change.index)
    }

    /// To the room's sockets except the originating one, one variant per `hasReacted` of the
    /// element `viewing` names (who has hearted it is read before the drain), each encoded once.
    /// `viewing` also gives the variant the actor sees (logged when nobody listens), or nil when
    /// the payload is the same for everyone (built with `false`, sent as a `room` event).
    static func roomPerViewer<V>(on change: DomainChange<V>,
                                 viewing: @escaping @Sendable (V) -> (elementId: String, actorHasReacted: Bool)?,
                                 _ build: @escaping @Sendable (DomainEvent, V, Bool) -> Payload) -> Self {
        Self(audience: .room, rule: .roomPerViewer(viewing: { e in change.values(e.kind).flatMap(viewing) },
                                                    build: { e, reacted in change.values(e.kind).map { [build(e, $0, reacted).wireJSON] } }),
             change: change.index)
    }

    /// To the room's sockets except the originating one, each member's with the room as that
    /// member sees it (read before the drain), one payload per member, each encoded once.
    static func roomPerMember<V>(on change: DomainChange<V>, _ build: @escaping @Sendable (DomainEvent, V, Room) -> Payload) -> Self {
        Self(audience: .room, rule: .roomPerMember { e, room in change.values(e.kind).map { [build(e, $0, room).wireJSON] } }, change: change.index)
    }

    /// A global event (`realtime.globalEvents`: the members' channels, or every socket), in the
    /// same emit as the room event of the same change, so a socket gets both in one write.
    static func members<V>(on change: DomainChange<V>, _ build: @escaping @Sendable (DomainEvent, V) -> Payload) -> Self {
        Self(audience: .members, rule: .members { e in change.values(e.kind).map { [build(e, $0).wireJSON] } }, change: change.index)
    }

    /// A global event whose payload is the room event `companion`'s: encoded once for both.
    static func members(sameAs companion: RealtimeServerEvent<Payload>) -> Self {
        precondition(companion.emitted.audience == .room && companion.emitted.change != nil, "\(companion.name) is not a room event of a domain change")
        return Self(audience: .members, rule: .membersSharingRoomPayload, change: companion.emitted.change)
    }
}

/// A server → client event's emission rule without its payload type, as the broadcaster runs it.
struct EmissionRule: Sendable {
    enum Shape: Sendable {
        case room(@Sendable (DomainEvent) -> [JSONValue]?)
        case roomPerViewer(viewing: @Sendable (DomainEvent) -> (elementId: String, actorHasReacted: Bool)?,
                           build: @Sendable (DomainEvent, Bool) -> [JSONValue]?)
        case roomPerMember(@Sendable (DomainEvent, Room) -> [JSONValue]?)
        case members(@Sendable (DomainEvent) -> [JSONValue]?)
        /// The arguments the change's room event was built with.
        case membersSharingRoomPayload
    }

    let name: String
    let shape: Shape

    var isGlobal: Bool {
        switch shape {
        case .members, .membersSharingRoomPayload: return true
        case .room, .roomPerViewer, .roomPerMember: return false
        }
    }
}

/// A declared server → client event with its payload type erased: its declaration and its rule.
struct AnyRealtimeServerEvent: Sendable {
    let declaration: RealtimeEventDeclaration
    /// The change that produces it and how; nil for `joiningSocket` events.
    let rule: (change: Int, rule: EmissionRule)?

    init<Payload>(_ event: RealtimeServerEvent<Payload>) {
        declaration = event.declaration
        if let shape = event.emitted.rule, let change = event.emitted.change {
            rule = (change, EmissionRule(name: event.name, shape: shape))
        } else {
            rule = nil
        }
    }
}

/// The rules of every declared server → client event, per domain change (indexed by
/// `DomainChanges.index`): room events first, then global ones, each group in declaration order,
/// so one emit carries a change's room event before its global companion, as a member's socket
/// expects them. Built once from the catalog.
struct RealtimeEmissionTable: Sendable {
    let byChange: [[EmissionRule]]

    init(_ events: [AnyRealtimeServerEvent]) {
        var table = Array(repeating: [EmissionRule](), count: DomainChanges.count)
        for case let (change, rule)? in events.map(\.rule) where !rule.isGlobal { table[change].append(rule) }
        for case let (change, rule)? in events.map(\.rule) where rule.isGlobal { table[change].append(rule) }
        for rules in table {
            let rooms = rules.filter { !$0.isGlobal }
            for rule in rules {
                if case .membersSharingRoomPayload = rule.shape {
                    var oneRoomPayload = false
                    if rooms.count == 1, case .room = rooms[0].shape { oneRoomPayload = true }
                    precondition(oneRoomPayload, "\(rule.name) shares the payload of its change's room event, and the change has not exactly one, with one payload for all")
                }
            }
        }
        byChange = table
    }

    @inline(__always)
    func rules(for kind: DomainEventKind) -> [EmissionRule] { byChange[DomainChanges.index(kind)] }
}
