import TSJSON

/// A heart on an element (docs/api.md, "Reaction").
public struct Reaction: Sendable, Equatable {
    public let id: String
    public let elementId: String
    public let userId: String
    public let createdAt: Int64
    public let user: PublicUser

    /// The tree of the realtime payloads; the REST toggle writes the same shape as bytes
    /// (`writeJSON(into:)`, Reaction+JSONShape.swift). A literal tree, not
    /// `JSONTreeWriter.build { writeJSON }`: it costs less per event (no `String` made from
    /// each `StaticString` key). ReactionShapeTests checks that the two are the same.
    public var json: JSONValue {
        .object([
            "id": .string(id), "elementId": .string(elementId), "userId": .string(userId), "type": "heart",
            "createdAt": .string(Timestamp.iso8601(createdAt)), "user": user.json,
        ])
    }
}

/// Reaction totals of one element for one viewer (docs/api.md, "ElementStats"): `count` and
/// `totalReactions` are both sent so that either client model decodes.
public struct ElementStats: Sendable, Equatable {
    public var totalReactions: Int64
    public var hasReacted: Bool
    public var topReactors: [PublicUser]

    /// As `Reaction.json`: a literal tree, the same shape as `writeJSON(into:)` (ReactionShapeTests).
    public var json: JSONValue {
        .object([
            "totalReactions": .int(totalReactions), "count": .int(totalReactions), "hasReacted": .bool(hasReacted),
            "userReaction": hasReacted ? "heart" : .null, "topReactors": .array(topReactors.map(\.json)),
        ])
    }

    public func viewed(hasReacted: Bool) -> ElementStats {
        var copy = self
        copy.hasReacted = hasReacted
        return copy
    }
}

/// What a toggle did.
public struct ToggleResult: Sendable, Equatable {
    public enum Action: String, Sendable { case added, removed }
    public let action: Action
    public let roomId: String
    public let reaction: Reaction
    public let stats: ElementStats
    /// The element's author, who is notified of an added reaction.
    public let elementOwner: String

    /// As `Reaction.json`: a literal tree, the same shape as `writeJSON(into:)` (ReactionShapeTests).
    public var json: JSONValue {
        .object(["action": .string(action.rawValue), "reaction": reaction.json, "elementStats": stats.json])
    }
}
