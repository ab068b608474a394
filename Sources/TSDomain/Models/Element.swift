import TSJSON

/// The element types a client may create (docs/api.md, "Element"); any other value is a 400.
public enum ElementType: String, Sendable, CaseIterable {
    case note, photo, audio, video, text, link
}

/// An element's reaction summary for one viewer; `nil` on the element while it has none.
public struct ElementReactions: Sendable, Equatable {
    public var count: Int64
    public var hasReacted: Bool
    public var topReactors: [PublicUser]

    public var userReaction: String? { hasReacted ? "heart" : nil }

    public var json: JSONValue {
        .object([
            "count": .int(count), "hasReacted": .bool(hasReacted), "userReaction": .optional(userReaction),
            "topReactors": .array(topReactors.map(\.json)),
        ])
    }

    /// The same summary as seen by a viewer who has or has not reacted.
    public func viewed(hasReacted: Bool) -> ElementReactions {
        var copy = self
        copy.hasReacted = hasReacted
        return copy
    }
}

/// A canvas element (docs/api.md, "Element").
public struct Element: Sendable, Equatable {
    public let id: String
    public let roomId: String
    public var type: ElementType
    public var positionX: Double
    public var positionY: Double
    public var width: Double
    public var height: Double
    public let createdBy: String
    public var content: String?
    public var imageUrl: String?
    public var audioUrl: String?
    public var videoUrl: String?
    public var thumbnailUrl: String?
    public var duration: Double?
    public let createdAt: Int64
    public var updatedAt: Int64
    /// The stored reaction count (kept in the toggle's transaction).
    public var reactionCount: Int64
    public var reactions: ElementReactions?

    public var json: JSONValue {
        .object([
            "id": .string(id), "roomId": .string(roomId), "type": .string(type.rawValue),
            "positionX": .double(positionX), "positionY": .double(positionY), "width": .double(width), "height": .double(height),
            "createdBy": .string(createdBy), "content": .optional(content), "imageUrl": .optional(imageUrl),
            "audioUrl": .optional(audioUrl), "videoUrl": .optional(videoUrl), "thumbnailUrl": .optional(thumbnailUrl),
            "duration": .optional(duration), "createdAt": .string(Timestamp.iso8601(createdAt)),
            "updatedAt": .string(Timestamp.iso8601(updatedAt)), "reactions": reactions?.json ?? .null,
        ])
    }

    /// The element as a viewer sees it: `hasReacted` set for that viewer.
    public func viewed(hasReacted: Bool) -> Element {
        var copy = self
        copy.reactions = reactions?.viewed(hasReacted: hasReacted)
        return copy
    }
}
