import Foundation

/// Schema `Post`.
public struct Post: Codable, Sendable, Hashable {
    public let id: String
    public let authorId: String
    public let content: String
    public let imageUrl: String?
    public let likeCount: Int
    public let saveCount: Int
    public let createdAt: Date
}

/// The caller's like/save state of one post (schema `PostInteractionState`).
public struct PostInteractionState: Codable, Sendable, Hashable {
    public let postId: String
    public let isLiked: Bool
    public let isSaved: Bool
    public let likeCount: Int
    public let saveCount: Int
}

/// The data of `POST /api/mobile/posts/interaction-state` (schema `InteractionStates`).
public struct InteractionStates: Codable, Sendable, Hashable {
    public let interactions: [PostInteractionState]
    public let totalPosts: Int
    public let totalLiked: Int
    public let totalSaved: Int
}

/// A registered push token (schema `Device`).
public struct Device: Codable, Sendable, Hashable {
    public let token: String
    /// `ios` or `android`.
    public let platform: String
    public let userId: String
}

/// Schema `DeviceDeleted`.
public struct DeviceDeleted: Codable, Sendable, Hashable {
    public let token: String
}

/// A notification of the caller's feed (schema `Notification`; named apart from Foundation's `Notification`).
public struct NotificationItem: Codable, Sendable, Hashable {
    public let id: String
    /// `element_reaction` or `element_created`.
    public let type: String
    public let roomId: String?
    public let elementId: String?
    public let actorId: String?
    public let createdAt: Date
    public let delivered: Bool
}

/// The answer of `POST /api/test/reset` (schema `TestResetResult`).
public struct TestResetResult: Codable, Sendable, Hashable {
    public let tables: [String]
    public let disconnectedSockets: Int
    public let durationMs: Double
    /// Events after this sequence number happened after the reset.
    public let lastEventSequence: Int64
    /// Nodes that applied the reset, this one included (more than 1 in a cluster).
    public let nodes: Int
}

/// The answer of `POST /api/test/limits` (schema `TestLimits`).
public struct TestLimitsState: Codable, Sendable, Hashable {
    public let enabled: Bool
}

/// A loaded user: id, username and a bearer token (a value of schema `FixtureResult.users`).
public struct LoadedUser: Codable, Sendable, Hashable {
    public let id: String
    public let username: String
    public let token: String
}

/// The answer of `POST /api/test/fixtures` (schema `FixtureResult`).
public struct FixtureResult: Codable, Sendable, Hashable {
    public let users: [String: LoadedUser]
    public let rooms: [String: String]
    public let elements: [String: String]
    public let messages: [String: String]
    public let posts: [String: String]
    public let counts: [String: Int]
    public let lastEventSequence: Int64
}

/// Where an event went (schema `RealtimeEventTarget`).
public struct RealtimeEventTarget: Codable, Sendable, Hashable {
    /// `room`, `user` or `socket`.
    public let type: String
    public let name: String?
    public let roomId: String?
    public let userId: String?
    public let socketId: String?
}

/// One realtime event the server emitted (schema `RealtimeEvent`).
public struct RealtimeEvent: Codable, Sendable, Hashable {
    /// Its sequence number in the server's event log.
    public let seq: Int64
    /// The Socket.IO event name, e.g. `element:reaction:added`.
    public let event: String
    /// The first argument (see docs/realtime.md for each event's shape).
    public let payload: TouchSyncJSON
    public let args: [TouchSyncJSON]
    public let target: RealtimeEventTarget
    /// The socket that caused it, which did not get it.
    public let except: String?
    /// Sockets it was handed to (0 when nobody listened: it is logged all the same).
    public let recipients: Int
    public let timestampMs: Int64
    /// true when a drop fault (`TouchSyncFaults.drop`) kept the event from a socket; nil otherwise.
    public let dropped: Bool?
    /// The Engine.IO sessions a drop fault kept the event from.
    public let droppedSessions: [String]?
}

/// A window of the event log (schema `RealtimeEventPage`).
public struct RealtimeEventPage: Codable, Sendable, Hashable {
    public let events: [RealtimeEvent]
    public let lastSequence: Int64
    /// Events after the cursor already evicted from the ring buffer.
    public let missed: Int64
    public let capacity: Int
}
