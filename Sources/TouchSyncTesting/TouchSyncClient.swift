import Foundation

/// The REST API (docs/api.md) as one user: set up state and check it the way the app sees it.
/// Get one from `TouchSyncBackend.client(as:)`; every call decodes the answer into the model of
/// its route and throws `TouchSyncError.api` (status, code, message, field) on an error answer.
public struct TouchSyncClient: Sendable {
    let transport: HTTPTransport
    /// The bearer token sent with every call (nil: none).
    public let token: String?
    /// Sent as `X-Socket-Id` on mutations, so that socket does not get the event the call causes.
    public let socketId: String?

    init(transport: HTTPTransport, token: String?, socketId: String? = nil) {
        self.transport = transport
        self.token = token
        self.socketId = socketId
    }

    /// The same client, sending `X-Socket-Id: socketId` with its mutations.
    public func excludingSocket(_ socketId: String) -> TouchSyncClient { TouchSyncClient(transport: transport, token: token, socketId: socketId) }

    /// Register, log in, the caller, refresh, log out.
    public var auth: Auth { Auth(client: self) }
    /// Rooms, members, the seen marker.
    public var rooms: Rooms { Rooms(client: self) }
    /// A room's canvas elements.
    public var elements: Elements { Elements(client: self) }
    /// Hearts.
    public var reactions: Reactions { Reactions(client: self) }
    /// A room's messages.
    public var messages: Messages { Messages(client: self) }
    /// Posts, likes, saves and their interaction state.
    public var posts: Posts { Posts(client: self) }
    /// Push tokens.
    public var devices: Devices { Devices(client: self) }
    /// The caller's notification feed.
    public var notifications: Notifications { Notifications(client: self) }

    /// `GET /health`.
    public func health() async throws -> Health {
        try await transport.send(.get, "/health").decode(Health.self, route: "GET /health")
    }

    /// Every route this client calls, as `METHOD /path` with the server's `:name` parameters
    /// (the model test compares it with `/openapi.json`).
    public static let routes: [String] = Auth.routes + Rooms.routes + Elements.routes + Reactions.routes + Messages.routes
        + Posts.routes + Devices.routes + Notifications.routes + ["GET /health"]

    // MARK: plumbing

    /// Percent-encodes one path segment.
    static func segment(_ s: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }

    func call<T: Decodable>(_ method: HTTPTransport.Method, _ route: String, _ path: String, query: [(String, String)] = [],
                            body: [String: TouchSyncJSON]? = nil, as type: T.Type, mutation: Bool = false) async throws -> T {
        let data = try body.map { try JSONEncoder().encode(TouchSyncJSON.object($0)) }
        var headers: [String: String] = [:]
        if mutation, let socketId { headers["X-Socket-Id"] = socketId }
        return try await transport.send(method, path, query: query, token: token, body: data, headers: headers)
            .decodeData(T.self, route: "\(method.rawValue) \(route)")
    }

    static func paging(limit: Int?, before: String?) -> [(String, String)] {
        var q: [(String, String)] = []
        if let limit { q.append(("limit", String(limit))) }
        if let before { q.append(("before", before)) }
        return q
    }
}

/// Optional request fields: only those set are sent (`nil` leaves a field out, `.null` clears it).
func fields(_ pairs: [(String, TouchSyncJSON?)]) -> [String: TouchSyncJSON] {
    var out: [String: TouchSyncJSON] = [:]
    for case let (key, value?) in pairs { out[key] = value }
    return out
}

extension TouchSyncClient {
    /// `/api/auth/*`.
    public struct Auth: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/auth/register", "POST /api/auth/login", "GET /api/auth/me", "POST /api/auth/refresh",
                             "POST /api/auth/logout", "DELETE /api/auth/me", "GET /api/auth/me/export"]

        /// Creates an account and answers its session.
        public func register(username: String, password: String, firstName: String? = nil, avatarUrl: String? = nil) async throws -> Session {
            try await client.call(.post, "/api/auth/register", "/api/auth/register",
                                  body: fields([("username", .string(username)), ("password", .string(password)),
                                                ("firstName", firstName.map { .string($0) }), ("avatarUrl", avatarUrl.map { .string($0) })]),
                                  as: Session.self)
        }

        /// Logs in (401 for a wrong username or password).
        public func login(username: String, password: String) async throws -> Session {
            try await client.call(.post, "/api/auth/login", "/api/auth/login",
                                  body: ["username": .string(username), "password": .string(password)], as: Session.self)
        }

        /// The caller.
        public func me() async throws -> User { try await client.call(.get, "/api/auth/me", "/api/auth/me", as: User.self) }
        /// A fresh token for the caller's.
        public func refresh() async throws -> Session { try await client.call(.post, "/api/auth/refresh", "/api/auth/refresh", as: Session.self) }
        /// Revokes every token of the caller.
        public func logout() async throws -> LoggedOut { try await client.call(.post, "/api/auth/logout", "/api/auth/logout", as: LoggedOut.self) }

        /// Deletes the caller's account and what only they had (needs their current password).
        public func deleteAccount(password: String) async throws -> AccountDeleted {
            try await client.call(.delete, "/api/auth/me", "/api/auth/me", body: ["password": .string(password)], as: AccountDeleted.self)
        }

        /// Everything the server holds about the caller.
        public func export() async throws -> AccountExport {
            try await client.call(.get, "/api/auth/me/export", "/api/auth/me/export", as: AccountExport.self)
        }
    }

    /// `/api/rooms` and a room's members, seen marker.
    public struct Rooms: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/rooms", "GET /api/rooms/my-rooms", "GET /api/rooms/:roomId", "PATCH /api/rooms/:roomId",
                             "POST /api/rooms/:roomId/members", "DELETE /api/rooms/:roomId/members/me", "POST /api/rooms/:roomId/seen"]

        /// Creates a room with the caller as a member (no name: the server's date-time name).
        public func create(name: String? = nil, memberIds: [String] = []) async throws -> Room {
            try await client.call(.post, "/api/rooms", "/api/rooms",
                                  body: fields([("name", name.map { .string($0) }),
                                                ("memberIds", memberIds.isEmpty ? nil : .array(memberIds.map { .string($0) }))]),
                                  as: Room.self)
        }

        /// The caller's rooms, most recently active first, with the caller's badges.
        public func mine() async throws -> [Room] { try await client.call(.get, "/api/rooms/my-rooms", "/api/rooms/my-rooms", as: [Room].self) }

        /// A room with its members and elements.
        public func get(_ roomId: String) async throws -> RoomDetail {
            try await client.call(.get, "/api/rooms/:roomId", "/api/rooms/\(seg(roomId))", as: RoomDetail.self)
        }

        /// Renames a room; emits `room:updated`.
        public func rename(_ roomId: String, to name: String) async throws -> Room {
            try await client.call(.patch, "/api/rooms/:roomId", "/api/rooms/\(seg(roomId))", body: ["name": .string(name)], as: Room.self,
                                  mutation: true)
        }

        /// Adds the user with id `userId`.
        public func addMember(_ roomId: String, userId: String) async throws -> MemberAdded {
            try await client.call(.post, "/api/rooms/:roomId/members", "/api/rooms/\(seg(roomId))/members", body: ["userId": .string(userId)],
                                  as: MemberAdded.self)
        }

        /// Adds the user named `username`.
        public func addMember(_ roomId: String, username: String) async throws -> MemberAdded {
            try await client.call(.post, "/api/rooms/:roomId/members", "/api/rooms/\(seg(roomId))/members", body: ["username": .string(username)],
                                  as: MemberAdded.self)
        }

        /// The caller leaves the room.
        public func leave(_ roomId: String) async throws -> MemberLeft {
            try await client.call(.delete, "/api/rooms/:roomId/members/me", "/api/rooms/\(seg(roomId))/members/me", as: MemberLeft.self)
        }

        /// Resets the caller's `badges.elements`.
        public func markSeen(_ roomId: String) async throws -> Room {
            try await client.call(.post, "/api/rooms/:roomId/seen", "/api/rooms/\(seg(roomId))/seen", as: Room.self)
        }
    }
}

func seg(_ s: String) -> String { TouchSyncClient.segment(s) }
