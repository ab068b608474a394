import Synchronization
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

/// The members reads of the events of one room, shared while not begun: an event published while
/// its room's members read still waits for a permit takes that read's answer instead of queueing
/// one of its own. The shared read begins after the event's commit (the event is published after
/// it), so it sees the membership the event's own read would have seen, or a later one, as a
/// read in the drain did. A burst of N events of one room (a fixture, an import) costs a handful
/// of reads, not N.
final class SharedMemberReads: Sendable {
    private typealias Answer = Task<Result<[String], any Error>, Never>

    /// Per room, the read not begun yet. An entry is added only where none is and removed only by
    /// its own read when it begins, so an entry can always still be shared.
    private let waiting = Mutex<[String: Answer]>([:])

    func members(of roomId: String, permits: AsyncPermits,
                 read: @escaping @Sendable () async throws -> [String]) async -> Result<[String], any Error> {
        let task = waiting.withLock { reads -> Answer in
            if let shared = reads[roomId] { return shared }
            // Created under the lock (the task only queues here): its first look at the map waits
            // for this one to end, so the entry it removes is its own.
            let task = Task { [self] () async -> Result<[String], any Error> in
                await permits.withPermit { () async -> Result<[String], any Error> in
                    // From here on the read is no longer shared: a later event needs a read that
                    // begins after its own commit.
                    _ = self.waiting.withLock { $0.removeValue(forKey: roomId) }
                    do { return .success(try await read()) } catch { return .failure(error) }
                }
            }
            reads[roomId] = task
            return task
        }
        return await task.value
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
        let permits = readPermits
        let roomId = event.roomId
        switch event.kind {
        case .elementCreated, .elementDeleted, .roomCleared:
            guard globalEventsToMembers else { return (.none, false) }
            let shared = sharedMemberReads
            return (.deferred { RecipientData(members: await shared.members(of: roomId, permits: permits) { try await reads.memberIds(roomId: roomId) }) }, false)
        case .elementUpdated(let element):
            guard element.reactions != nil else { return (.none, false) }
            return (hearted(element.id), true)
        case .reactionAdded(let elementId, _, _), .reactionRemoved(let elementId, _, _):
            return (hearted(elementId), true)
        case .roomUpdated:
            let hub = self.hub
            let actor = event.actorId
            return (.deferred {
                await permits.withPermit { RecipientData(rooms: await Self.result {
                    let members = try await reads.memberIds(roomId: roomId)
                    var viewers = members.filter { !hub.sockets(inRoom: RealtimeConfiguration.userChannel($0)).isEmpty }
                    if !viewers.contains(actor) { viewers.append(actor) }  // the view logged when nobody listens
                    return try await reads.rooms(roomId: roomId, viewers: viewers)
                }) }
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
        let permits = readPermits
        return .deferred { await permits.withPermit { RecipientData(hearted: await Self.result { try await reads.heartedBy(elementId: elementId) }) } }
    }

    private static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
