import Foundation

/// Kinds of canvas element (schema `ElementType`).
public enum ElementType: String, Codable, Sendable, CaseIterable {
    case note, photo, audio, video, text, link
}

/// The reaction summary of an element for the requesting user (schema `ElementReactions`).
public struct ElementReactions: Codable, Sendable, Hashable {
    public let count: Int
    public let hasReacted: Bool
    public let userReaction: String?
    public let topReactors: [User]
}

/// A canvas element (schema `Element`).
public struct Element: Codable, Sendable, Hashable {
    public let id: String
    public let roomId: String
    public let type: ElementType
    public let positionX: Double
    public let positionY: Double
    public let width: Double
    public let height: Double
    public let createdBy: String
    public let content: String?
    public let imageUrl: String?
    public let audioUrl: String?
    public let videoUrl: String?
    public let thumbnailUrl: String?
    public let duration: Double?
    public let createdAt: Date
    public let updatedAt: Date
    /// nil while the element has no reactions.
    public let reactions: ElementReactions?
}

/// A heart (schema `Reaction`).
public struct Reaction: Codable, Sendable, Hashable {
    public let id: String
    public let elementId: String
    public let userId: String
    public let type: String
    public let createdAt: Date
    public let user: User
}

/// Schema `ElementStats` (per recipient in realtime events).
public struct ElementStats: Codable, Sendable, Hashable {
    public let totalReactions: Int
    public let count: Int
    public let hasReacted: Bool
    public let userReaction: String?
    public let topReactors: [User]
}

/// What a toggle did (schema `ToggleResult`).
public struct ToggleResult: Codable, Sendable, Hashable {
    /// `added` or `removed`.
    public let action: String
    public let reaction: Reaction
    public let elementStats: ElementStats
}

/// Schema `ReactionPage`.
public struct ReactionPage: Codable, Sendable, Hashable {
    public let reactions: [Reaction]
    public let total: Int
    public let hasReacted: Bool
}

/// Schema `ElementDeleted`.
public struct ElementDeleted: Codable, Sendable, Hashable {
    public let id: String
}

/// Schema `RoomCleared`.
public struct RoomCleared: Codable, Sendable, Hashable {
    public let roomId: String
    public let deleted: Int
}

/// Schema `Message`.
public struct Message: Codable, Sendable, Hashable {
    public let id: String
    public let roomId: String
    public let userId: String
    public let text: String
    public let createdAt: Date
    public let user: User
}
