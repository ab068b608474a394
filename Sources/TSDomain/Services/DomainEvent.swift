import TSSync
import TSJSON

/// A change that the realtime layer broadcasts (docs/realtime.md). Built inside the write
/// transaction that makes the change (its payload, e.g. a reaction count, is what that
/// transaction wrote) and published by the writer thread right after the COMMIT, in commit
/// order, through one seam (`DomainEventPublisher`) shared by the REST and socket paths.
public enum DomainEventKind: Sendable, Equatable {
    case elementCreated(Element)
    case elementUpdated(Element)
    case elementDeleted(elementId: String)
    case roomCleared(deleted: Int)
    case roomUpdated
    case messageCreated(Message)
    case reactionAdded(elementId: String, reaction: Reaction, stats: ElementStats)
    case reactionRemoved(elementId: String, userId: String, stats: ElementStats)
}

public struct DomainEvent: Sendable, Equatable {
    public let kind: DomainEventKind
    public let roomId: String
    /// The user whose action caused the event.
    public let actorId: String
    /// The Socket.IO socket that caused it (socket events, or REST's `X-Socket-Id`): room events skip it.
    public let originSocketId: String?
    /// The room's event number (`rooms.event_seq`), taken in the transaction that made the change
    /// (`RoomEventNumbers`): every node delivers a room's events in this order, which is their
    /// commit order across nodes (docs/realtime-cluster.md, "Order across nodes"). Nil only for an
    /// event whose room row was gone when it committed, or one from a node that does not number.
    public var seq: Int64?

    public init(kind: DomainEventKind, roomId: String, actorId: String, originSocketId: String?, seq: Int64? = nil) {
        self.kind = kind
        self.roomId = roomId
        self.actorId = actorId
        self.originSocketId = originSocketId
        self.seq = seq
    }

    public var name: String {
        switch kind {
        case .elementCreated: return "element:created"
        case .elementUpdated: return "element:updated"
        case .elementDeleted: return "element:deleted"
        case .roomCleared: return "room:cleared"
        case .roomUpdated: return "room:updated"
        case .messageCreated: return "message:created"
        case .reactionAdded: return "element:reaction:added"
        case .reactionRemoved: return "element:reaction:removed"
        }
    }
}

/// The seam between the domain and whoever broadcasts its changes.
public protocol DomainEventPublisher: Sendable {
    /// Called on the database's writer thread right after the transaction that produced the
    /// event committed, one event at a time, in commit order (`Database.write(_:committed:)`).
    /// It must only hand the event on (append it to a queue): the writer commits nothing else
    /// meanwhile, and the request that caused the event does not wait for its broadcast.
    func publish(_ event: DomainEvent)
}

/// Keeps every event in order; the subscriber used until a realtime hub is attached, and in tests.
public final class RecordingEventPublisher: DomainEventPublisher, Sendable {
    private let storage = LockedValue<[DomainEvent]>([])

    public init() {}

    public func publish(_ event: DomainEvent) { storage.withLock { $0.append(event) } }

    public var events: [DomainEvent] { storage.current }
}

/// Forwards each event to several subscribers, in the order given.
public struct FanoutEventPublisher: DomainEventPublisher {
    private let subscribers: [any DomainEventPublisher]

    public init(_ subscribers: [any DomainEventPublisher]) { self.subscribers = subscribers }

    public func publish(_ event: DomainEvent) {
        for s in subscribers { s.publish(event) }
    }
}
