import Foundation

// Codable models written from the objects of docs/api.md, decoded with `.iso8601` dates: what an iOS client
// does. Optionals are `?`; `StrictKeys` checks that every contract field is present (null, not omitted).

struct DataEnvelope<T: Decodable>: Decodable { let data: T }

struct ErrorEnvelope: Decodable {
    struct Body: Decodable { let code: String; let message: String; let field: String? }
    let error: Body
}

struct MobileEnvelope<T: Decodable>: Decodable {
    let success: Bool
    let message: String
    let data: T?
    let error: String?
    let code: String?
}

struct UserDTO: Decodable, Equatable { let id: String; let username: String; let firstName: String?; let avatarUrl: String? }

struct SessionDTO: Decodable { let token: String; let user: UserDTO }

struct BadgesDTO: Decodable, Equatable { let messages: Int; let elements: Int }

struct RoomDTO: Decodable {
    let id: String
    let name: String
    let createdBy: String
    let createdAt: Date
    let updatedAt: Date
    let isActive: Bool
    let nameSetBy: String?
    let nameSetByUser: UserDTO?
    let elementCount: Int
    let badges: BadgesDTO
    let hasUnread: Bool
}

struct RoomDetailDTO: Decodable {
    let id: String
    let name: String
    let elementCount: Int
    let members: [UserDTO]
    let elements: [ElementDTO]
}

struct ElementReactionsDTO: Decodable, Equatable {
    let count: Int
    let hasReacted: Bool
    let userReaction: String?
    let topReactors: [UserDTO]
}

struct ElementDTO: Decodable {
    let id: String
    let roomId: String
    let type: String
    let positionX: Double
    let positionY: Double
    let width: Double
    let height: Double
    let createdBy: String
    let content: String?
    let imageUrl: String?
    let audioUrl: String?
    let videoUrl: String?
    let thumbnailUrl: String?
    let duration: Double?
    let createdAt: Date
    let updatedAt: Date
    let reactions: ElementReactionsDTO?
}

struct ReactionDTO: Decodable {
    let id: String
    let elementId: String
    let userId: String
    let type: String
    let createdAt: Date
    let user: UserDTO
}

struct ElementStatsDTO: Decodable {
    let totalReactions: Int
    let count: Int
    let hasReacted: Bool
    let userReaction: String?
    let topReactors: [UserDTO]
}

struct ToggleDTO: Decodable {
    let action: String
    let reaction: ReactionDTO
    let elementStats: ElementStatsDTO
}

struct ReactionPageDTO: Decodable { let reactions: [ReactionDTO]; let total: Int; let hasReacted: Bool }

struct MessageDTO: Decodable { let id: String; let roomId: String; let userId: String; let text: String; let createdAt: Date; let user: UserDTO }

// The mobile clients' interaction-state model, verbatim.
struct InteractionStateResponse: Codable {
    let success: Bool
    let message: String
    let data: InteractionStateData?
    let error: String?
    let code: String?
}

struct InteractionStateData: Codable {
    let interactions: [PostInteractionState]
    let totalPosts: Int
    let totalLiked: Int
    let totalSaved: Int
}

struct PostInteractionState: Codable {
    let postId: String
    let isLiked: Bool
    let isSaved: Bool
    let likeCount: Int
    let saveCount: Int
}

struct PostDTO: Decodable { let id: String; let content: String; let imageUrl: String?; let likeCount: Int; let saveCount: Int }

struct NotificationDTO: Decodable { let id: String; let type: String; let roomId: String?; let elementId: String?; let createdAt: Date }

enum ContractKeys {
    static let user: Set<String> = ["id", "username", "firstName", "avatarUrl"]
    static let room: Set<String> = ["id", "name", "createdBy", "createdAt", "updatedAt", "isActive", "nameSetBy", "nameSetByUser",
                                    "elementCount", "badges", "hasUnread"]
    static let element: Set<String> = ["id", "roomId", "type", "positionX", "positionY", "width", "height", "createdBy", "content",
                                       "imageUrl", "audioUrl", "videoUrl", "thumbnailUrl", "duration", "createdAt", "updatedAt", "reactions"]
    static let reaction: Set<String> = ["id", "elementId", "userId", "type", "createdAt", "user"]
    static let stats: Set<String> = ["totalReactions", "count", "hasReacted", "userReaction", "topReactors"]
    static let message: Set<String> = ["id", "roomId", "userId", "text", "createdAt", "user"]
}
