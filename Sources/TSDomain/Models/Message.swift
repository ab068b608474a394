import TSJSON

/// A chat message in a room (docs/api.md, "Message").
public struct Message: Sendable, Equatable {
    public let id: String
    public let roomId: String
    public let userId: String
    public let text: String
    public let createdAt: Int64
    public let user: PublicUser

    public var json: JSONValue {
        .object([
            "id": .string(id), "roomId": .string(roomId), "userId": .string(userId), "text": .string(text),
            "createdAt": .string(Timestamp.iso8601(createdAt)), "user": user.json,
        ])
    }
}
