import Foundation

/// The payload of a server → client Socket.IO event (a message of `/asyncapi.json`), decoded
/// from the event log: `try await events.next(ElementCreatedEvent.self)`.
public protocol TouchSyncEventPayload: Decodable, Sendable {
    /// The Socket.IO event name (the message's `name` in `/asyncapi.json`).
    static var event: String { get }
}

/// Every payload type the kit models, one per server → client event (ModelDriftTests checks
/// them against `/asyncapi.json` both ways).
public let touchSyncEventPayloads: [any TouchSyncEventPayload.Type] = [
    ElementsBatchEvent.self, ElementCreatedEvent.self, ElementUpdatedEvent.self, ElementDeletedEvent.self, RoomClearedEvent.self,
    RoomUpdatedEvent.self, MessageCreatedEvent.self, ReactionAddedEvent.self, ReactionRemovedEvent.self,
    ElementCreatedGlobalEvent.self, ElementDeletedGlobalEvent.self, RoomClearedGlobalEvent.self,
]

/// `elements:batch`: the room's elements, to the socket that sent `room:join`.
public struct ElementsBatchEvent: TouchSyncEventPayload, Hashable {
    public static let event = "elements:batch"
    public let roomId: String
    public let elements: [Element]
}

/// `element:created`.
public struct ElementCreatedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:created"
    public let element: Element
}

/// `element:updated` (`element.reactions.hasReacted` is the recipient's).
public struct ElementUpdatedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:updated"
    public let element: Element
}

/// `element:deleted`.
public struct ElementDeletedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:deleted"
    public let elementId: String
    public let roomId: String
}

/// `room:cleared`.
public struct RoomClearedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "room:cleared"
    public let roomId: String
    public let clearedBy: String
}

/// `room:updated` (badges are the recipient's).
public struct RoomUpdatedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "room:updated"
    public let room: Room
}

/// `message:created`.
public struct MessageCreatedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "message:created"
    public let message: Message
}

/// `element:reaction:added` (`stats` are the recipient's).
public struct ReactionAddedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:reaction:added"
    public let elementId: String
    public let roomId: String
    public let reaction: Reaction
    public let stats: ElementStats
}

/// `element:reaction:removed` (`stats` are the recipient's).
public struct ReactionRemovedEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:reaction:removed"
    public let elementId: String
    public let roomId: String
    public let userId: String
    public let stats: ElementStats
}

/// `element:created:global`.
public struct ElementCreatedGlobalEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:created:global"
    public let roomId: String
    public let elementId: String
    public let createdBy: String
    public let type: ElementType
}

/// `element:deleted:global`.
public struct ElementDeletedGlobalEvent: TouchSyncEventPayload, Hashable {
    public static let event = "element:deleted:global"
    public let roomId: String
    public let elementId: String
    public let deletedBy: String
}

/// `room:cleared:global`.
public struct RoomClearedGlobalEvent: TouchSyncEventPayload, Hashable {
    public static let event = "room:cleared:global"
    public let roomId: String
    public let clearedBy: String
}
