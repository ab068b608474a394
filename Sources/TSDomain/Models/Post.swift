import TSJSON

/// A feed post of the mobile routes (`/api/mobile/posts`).
public struct Post: Sendable, Equatable {
    public let id: String
    public let authorId: String
    public let content: String
    public let imageUrl: String?
    public let createdAt: Int64
    public let likeCount: Int64
    public let saveCount: Int64

    public var json: JSONValue {
        .object([
            "id": .string(id), "authorId": .string(authorId), "content": .string(content), "imageUrl": .optional(imageUrl),
            "likeCount": .int(likeCount), "saveCount": .int(saveCount), "createdAt": .string(Timestamp.iso8601(createdAt)),
        ])
    }
}

/// One post's like/save state for the caller (docs/api.md, "PostInteractionState").
public struct PostInteractionState: Sendable, Equatable {
    public let postId: String
    public let isLiked: Bool
    public let isSaved: Bool
    public let likeCount: Int64
    public let saveCount: Int64

    /// The shape is written once, in `writeJSON(into:)` (Room+JSONShape.swift).
    public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }
}
