import TSDomain
import TSSocketIO

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

    static let none = RecipientData()
}

/// An event's reads: done (nothing to read), or under way in a task of their own.
enum Prefetch: Sendable {
    case ready(RecipientData)
    case reading(Task<RecipientData, Never>)

    var value: RecipientData {
        get async {
            switch self {
            case .ready(let data): return data
            case .reading(let task): return await task.value
            }
        }
    }
}

extension RealtimeBroadcaster {
    /// Starts the reads `event`'s broadcast needs (called as it is published, on the writer thread
    /// for a local commit: it only starts a task). The answers are read right after the commit,
    /// concurrently with the delivery of the room's earlier events; the drain takes them in order.
    ///
    /// Recipients are only known when the drain gets to the event, so each read covers every
    /// recipient the event can have: all the element's hearts, all the members' channels, the
    /// room for every member with a socket on this node (a socket in a room's channel is a
    /// member's; a non-member's view does not exist, and such a socket got no `room:updated`
    /// before either).
    func prefetch(_ event: DomainEvent) -> Prefetch {
        let reads = recipientReads
        let roomId = event.roomId
        switch event.kind {
        case .elementCreated, .elementDeleted, .roomCleared:
            guard globalEventsToMembers else { return .ready(.none) }
            return .reading(Task { RecipientData(members: await Self.result { try await reads.memberIds(roomId: roomId) }) })
        case .elementUpdated(let element):
            guard element.reactions != nil else { return .ready(.none) }
            return hearted(element.id)
        case .reactionAdded(let elementId, _, _), .reactionRemoved(let elementId, _, _):
            return hearted(elementId)
        case .roomUpdated:
            let hub = self.hub
            let actor = event.actorId
            return .reading(Task {
                RecipientData(rooms: await Self.result {
                    let members = try await reads.memberIds(roomId: roomId)
                    var viewers = members.filter { !hub.sockets(inRoom: RealtimeConfiguration.userChannel($0)).isEmpty }
                    if !viewers.contains(actor) { viewers.append(actor) }  // the view logged when nobody listens
                    return try await reads.rooms(roomId: roomId, viewers: viewers)
                })
            })
        case .messageCreated:
            return .ready(.none)
        }
    }

    private func hearted(_ elementId: String) -> Prefetch {
        let reads = recipientReads
        return .reading(Task { RecipientData(hearted: await Self.result { try await reads.heartedBy(elementId: elementId) }) })
    }

    private static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
