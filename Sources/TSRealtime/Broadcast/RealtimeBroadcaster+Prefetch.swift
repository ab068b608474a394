import TSDomain
import TSSocketIO
import TSSync

/// What one event's payloads need from the database, read before the event enters its room's
/// drain. A nil field was not needed for that event; a failed read is kept as its error and
/// handled where the answer is used (logged, that part of the broadcast not sent), as a read in
/// the drain was.
struct RecipientData: Sendable {
    /// The room's members: a global event's channels (`realtime.globalEvents` = members).
    var members: Result<[String], any Error>?
    /// Who has hearted the element: the `hasReacted` variant each recipient gets.
    var hearted: Result<Set<String>, any Error>?
    /// The room as each member connected to this node sees it: `room:updated` badges.
    var rooms: Result<[String: Room], any Error>?
    /// The room's sockets (without the originating one) when the drain found nobody there and so
    /// read nothing: the per-viewer emit goes to exactly these (none), not to a socket that came
    /// in after that look, for which `hearted` was not read.
    var audience: [SocketIOSocket]?

    static let none = RecipientData()
}

/// An event's reads: done (nothing to read), or a read that starts only when something asks for
/// it (`start`, `value`), once. A reaction's `hasReacted` variants need who has hearted the
/// element only when a socket other than the actor's can receive the event; with nobody in the
/// room (the common case for a REST toggle) the read never starts.
final class Prefetch: Sendable {
    private enum State {
        case ready(RecipientData)
        case deferred(@Sendable () async -> RecipientData)
        case reading(Task<RecipientData, Never>)
    }

    private let state: LockedValue<State>

    private init(_ state: State) { self.state = LockedValue(state) }

    /// Nothing to read.
    static let none = Prefetch(.ready(.none))

    /// A read that runs when `start` or `value` first asks for it.
    static func deferred(_ read: @escaping @Sendable () async -> RecipientData) -> Prefetch { Prefetch(.deferred(read)) }

    /// Starts the read now, in a task of its own (no-op once started or done).
    func start() {
        state.withLock { s in
            if case .deferred(let read) = s { s = .reading(Task { await read() }) }
        }
    }

    /// True once the read started (or there was nothing to read).
    var started: Bool { state.withLock { if case .deferred = $0 { return false } else { return true } } }

    /// The answer, starting the read if nobody did yet.
    var value: RecipientData {
        get async {
            start()
            return await startedValue ?? .none
        }
    }

    /// The answer when the read was started; nil when it was never asked for (nothing read).
    var startedValue: RecipientData? {
        get async {
            let s = state.withLock { $0 }
            switch s {
            case .ready(let data): return data
            case .reading(let task): return await task.value
            case .deferred: return nil
            }
        }
    }
}

extension RealtimeBroadcaster {
    /// The reads `event`'s broadcast needs, not started yet, and whether only a socket in the
    /// event's room can need them (`roomOnly`: who has hearted the element, for the `hasReacted`
    /// variants of a per-viewer room event). `publish` starts the others at once, and a
    /// `roomOnly` read when the room has a listener or a `room:join` on its way (see `publish`).
    ///
    /// Recipients are only known when the drain gets to the event, so each read covers every
    /// recipient the event can have: all the element's hearts, all the members' channels, the
    /// room for every member with a socket on this node (a socket in a room's channel is a
    /// member's; a non-member's view does not exist, and such a socket got no `room:updated`
    /// before either).
    func prefetch(_ event: DomainEvent) -> (reads: Prefetch, roomOnly: Bool) {
        let reads = recipientReads
        let roomId = event.roomId
        switch event.kind {
        case .elementCreated, .elementDeleted, .roomCleared:
            guard globalEventsToMembers else { return (.none, false) }
            return (.deferred { RecipientData(members: await Self.result { try await reads.memberIds(roomId: roomId) }) }, false)
        case .elementUpdated(let element):
            guard element.reactions != nil else { return (.none, false) }
            return (hearted(element.id), true)
        case .reactionAdded(let elementId, _, _), .reactionRemoved(let elementId, _, _):
            return (hearted(elementId), true)
        case .roomUpdated:
            let hub = self.hub
            let actor = event.actorId
            return (.deferred {
                RecipientData(rooms: await Self.result {
                    let members = try await reads.memberIds(roomId: roomId)
                    var viewers = members.filter { !hub.sockets(inRoom: RealtimeConfiguration.userChannel($0)).isEmpty }
                    if !viewers.contains(actor) { viewers.append(actor) }  // the view logged when nobody listens
                    return try await reads.rooms(roomId: roomId, viewers: viewers)
                })
            }, false)
        case .messageCreated:
            return (.none, false)
        }
    }

    /// True when a socket other than the event's originating one is in the event's room channel.
    func roomHasListener(_ event: DomainEvent) -> Bool {
        roomAudience(event).isEmpty == false
    }

    /// The sockets of the event's room channel on this node, without the originating one.
    func roomAudience(_ event: DomainEvent) -> [SocketIOSocket] {
        let except = event.originSocketId
        return hub.sockets(inRoom: RealtimeConfiguration.roomChannel(event.roomId)).filter { $0.id != except }
    }

    private func hearted(_ elementId: String) -> Prefetch {
        let reads = recipientReads
        return .deferred { RecipientData(hearted: await Self.result { try await reads.heartedBy(elementId: elementId) }) }
    }

    private static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
