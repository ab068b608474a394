import Foundation

// The REST answers' shapes (docs/api.md "Objects", `components.schemas` of /openapi.json). Every
// property is named as its JSON field; a field that may be `null` is an optional. Dates are the
// wire's ISO 8601 UTC with second precision. `TouchSyncTestingTests` checks each model against
// the live server's schema, so a renamed field fails there first.

/// A user as other users see them (schema `User`).
public struct User: Codable, Sendable, Hashable {
    public let id: String
    public let username: String
    public let firstName: String?
    public let avatarUrl: String?
}

/// A token and its user: the answer of register, login and refresh (schema `Session`).
public struct Session: Codable, Sendable, Hashable {
    public let token: String
    public let user: User
}

/// The caller's unread counts in a room (schema `Badges`).
public struct Badges: Codable, Sendable, Hashable {
    public let messages: Int
    public let elements: Int
}

/// A room as the caller sees it (schema `Room`).
public struct Room: Codable, Sendable, Hashable {
    public let id: String
    public let name: String
    public let createdBy: String
    public let createdAt: Date
    public let updatedAt: Date
    public let isActive: Bool
    public let nameSetBy: String?
    public let nameSetByUser: User?
    public let elementCount: Int
    public let badges: Badges
    public let hasUnread: Bool
}

/// A room with its members and elements (schema `RoomDetail`: the fields of `Room` plus
/// `members` and `elements`). The room's fields read through: `detail.name`, `detail.badges`.
@dynamicMemberLookup
public struct RoomDetail: Codable, Sendable, Hashable {
    public let room: Room
    public let members: [User]
    public let elements: [Element]

    /// A field of the room: `detail.name`, `detail.elementCount`.
    public subscript<T>(dynamicMember field: KeyPath<Room, T>) -> T { room[keyPath: field] }

    private enum CodingKeys: String, CodingKey { case members, elements }

    /// Decodes the flat wire object: the room's fields beside `members` and `elements`.
    public init(from decoder: Decoder) throws {
        room = try Room(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        members = try c.decode([User].self, forKey: .members)
        elements = try c.decode([Element].self, forKey: .elements)
    }

    /// Encodes the flat wire object.
    public func encode(to encoder: Encoder) throws {
        try room.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(members, forKey: .members)
        try c.encode(elements, forKey: .elements)
    }
}

/// Schema `MemberAdded`.
public struct MemberAdded: Codable, Sendable, Hashable {
    public let roomId: String
    public let user: User
}

/// Schema `MemberLeft`.
public struct MemberLeft: Codable, Sendable, Hashable {
    public let roomId: String
    public let userId: String
}

/// Schema `LoggedOut`: every token issued to the user before the request is revoked.
public struct LoggedOut: Codable, Sendable, Hashable {
    public let userId: String
    public let loggedOut: Bool
}

/// Schema `Health` (`GET /health`).
public struct Health: Codable, Sendable, Hashable {
    public let status: String
    public let version: String
    public let uptimeSeconds: Int
    public let database: String
    public let redis: String?
    public let degradedReason: String?
    /// The last scheduled backup, when backups are configured.
    public let backup: BackupStatus?
}

/// The state of scheduled backups in `/health` (schema `BackupStatus`).
public struct BackupStatus: Codable, Sendable, Hashable {
    /// `pending`, `ok` or `failed`.
    public let status: String
    public let directory: String
    public let at: Date?
    public let file: String?
    public let bytes: Int?
    public let error: String?
}

/// What deleting the caller's account removed (schema `AccountDeleted`).
public struct AccountDeleted: Codable, Sendable, Hashable {
    public let userId: String
    public let deleted: Bool
    public let roomsDeleted: Int
    public let elementsDeleted: Int
    public let reactionsDeleted: Int
    public let messagesDeleted: Int
}

/// The caller's own data (schema `AccountExport`); sections without a schema of their own stay JSON.
public struct AccountExport: Codable, Sendable, Hashable {
    /// The exported user, with the account's creation time (schema `AccountExport.user`).
    public struct ExportedUser: Codable, Sendable, Hashable {
        public let id: String
        public let username: String
        public let firstName: String?
        public let avatarUrl: String?
        public let createdAt: Date
    }

    public let exportedAt: Date
    public let user: ExportedUser
    public let rooms: [Room]
    public let memberships: [TouchSyncJSON]
    public let elements: [Element]
    public let reactions: [TouchSyncJSON]
    public let messages: [TouchSyncJSON]
    public let posts: [TouchSyncJSON]
    public let likes: [TouchSyncJSON]
    public let saves: [TouchSyncJSON]
    public let devices: [TouchSyncJSON]
    public let notifications: [TouchSyncJSON]
    /// Sections that reached the export's row bound and were cut there.
    public let truncated: [String]
}
