import TSJSON

/// A push notification as one user sees it (a heart, a new element): created in the transaction of the
/// change that caused it, delivered afterwards by `NotificationWorker`.
public struct NotificationRecord: Sendable, Equatable {
    public enum Kind: String, Sendable { case elementReaction = "element_reaction", elementCreated = "element_created" }
    public let id: String
    public let userId: String
    public let type: Kind
    public let roomId: String?
    public let elementId: String?
    public let actorId: String?
    public let createdAt: Int64
    /// Whether it has been handed to the delivery backend.
    public let delivered: Bool

    public var json: JSONValue {
        .object([
            "id": .string(id), "type": .string(type.rawValue), "roomId": .optional(roomId), "elementId": .optional(elementId),
            "actorId": .optional(actorId), "createdAt": .string(Timestamp.iso8601(createdAt)),
            "delivered": .bool(delivered),
        ])
    }
}
