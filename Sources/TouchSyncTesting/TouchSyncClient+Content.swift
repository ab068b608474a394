import Foundation

extension TouchSyncClient {
    /// A room's canvas elements.
    public struct Elements: Sendable {
        let client: TouchSyncClient
        static let routes = ["GET /api/rooms/:roomId/elements", "POST /api/rooms/:roomId/elements", "DELETE /api/rooms/:roomId/elements",
                             "PATCH /api/rooms/:roomId/elements/:elementId", "DELETE /api/rooms/:roomId/elements/:elementId"]

        /// The room's elements, oldest first.
        public func list(room roomId: String) async throws -> [Element] {
            try await client.call(.get, "/api/rooms/:roomId/elements", "/api/rooms/\(seg(roomId))/elements", as: [Element].self)
        }

        /// Creates an element (position defaults to 0,0 and size to 150×150); emits `element:created`.
        public func create(in roomId: String, type: ElementType, positionX: Double = 0, positionY: Double = 0, width: Double = 150,
                           height: Double = 150, content: String? = nil, imageUrl: String? = nil, audioUrl: String? = nil,
                           videoUrl: String? = nil, thumbnailUrl: String? = nil, duration: Double? = nil) async throws -> Element {
            var body: [String: TouchSyncJSON] = ["type": .string(type.rawValue), "positionX": .number(positionX), "positionY": .number(positionY),
                                                 "width": .number(width), "height": .number(height)]
            body.merge(fields([("content", content.map { .string($0) }), ("imageUrl", imageUrl.map { .string($0) }),
                               ("audioUrl", audioUrl.map { .string($0) }), ("videoUrl", videoUrl.map { .string($0) }),
                               ("thumbnailUrl", thumbnailUrl.map { .string($0) }), ("duration", duration.map { .number($0) })])) { $1 }
            return try await client.call(.post, "/api/rooms/:roomId/elements", "/api/rooms/\(seg(roomId))/elements", body: body,
                                         as: Element.self, mutation: true)
        }

        /// Updates the fields given in `changes` (any subset of `UpdateElementRequest`: `type`,
        /// `positionX`, `positionY`, `width`, `height`, `content`, `imageUrl`, …; `.null` clears a nullable one).
        public func update(_ elementId: String, in roomId: String, _ changes: [String: TouchSyncJSON]) async throws -> Element {
            try await client.call(.patch, "/api/rooms/:roomId/elements/:elementId", "/api/rooms/\(seg(roomId))/elements/\(seg(elementId))",
                                  body: changes, as: Element.self, mutation: true)
        }

        /// Deletes an element; emits `element:deleted`.
        public func delete(_ elementId: String, in roomId: String) async throws -> ElementDeleted {
            try await client.call(.delete, "/api/rooms/:roomId/elements/:elementId", "/api/rooms/\(seg(roomId))/elements/\(seg(elementId))",
                                  as: ElementDeleted.self, mutation: true)
        }

        /// Deletes every element of the room.
        public func clear(room roomId: String) async throws -> RoomCleared {
            try await client.call(.delete, "/api/rooms/:roomId/elements", "/api/rooms/\(seg(roomId))/elements", as: RoomCleared.self, mutation: true)
        }
    }

    /// Hearts on elements.
    public struct Reactions: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/rooms/:roomId/elements/:elementId/reactions/toggle", "GET /api/rooms/:roomId/elements/:elementId/reactions"]

        /// Adds the caller's heart, or removes it when there is one.
        public func toggle(room roomId: String, element elementId: String) async throws -> ToggleResult {
            try await client.call(.post, "/api/rooms/:roomId/elements/:elementId/reactions/toggle",
                                  "/api/rooms/\(seg(roomId))/elements/\(seg(elementId))/reactions/toggle", as: ToggleResult.self, mutation: true)
        }

        /// The element's reactions, newest first.
        public func list(room roomId: String, element elementId: String, limit: Int? = nil, before: String? = nil) async throws -> ReactionPage {
            try await client.call(.get, "/api/rooms/:roomId/elements/:elementId/reactions",
                                  "/api/rooms/\(seg(roomId))/elements/\(seg(elementId))/reactions",
                                  query: TouchSyncClient.paging(limit: limit, before: before), as: ReactionPage.self)
        }
    }

    /// A room's messages.
    public struct Messages: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/rooms/:roomId/messages", "GET /api/rooms/:roomId/messages", "POST /api/rooms/:roomId/messages/read"]

        /// Sends a message; emits `message:created`.
        public func send(_ text: String, in roomId: String) async throws -> Message {
            try await client.call(.post, "/api/rooms/:roomId/messages", "/api/rooms/\(seg(roomId))/messages", body: ["text": .string(text)],
                                  as: Message.self, mutation: true)
        }

        /// The room's messages, newest first.
        public func list(room roomId: String, limit: Int? = nil, before: String? = nil) async throws -> [Message] {
            try await client.call(.get, "/api/rooms/:roomId/messages", "/api/rooms/\(seg(roomId))/messages",
                                  query: TouchSyncClient.paging(limit: limit, before: before), as: [Message].self)
        }

        /// Resets the caller's `badges.messages`.
        public func markRead(room roomId: String) async throws -> Room {
            try await client.call(.post, "/api/rooms/:roomId/messages/read", "/api/rooms/\(seg(roomId))/messages/read", as: Room.self)
        }
    }

    /// Posts (`/api/mobile/posts`, the `{"success", "message", "data"}` envelope).
    public struct Posts: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/mobile/posts", "POST /api/mobile/posts/:postId/like", "DELETE /api/mobile/posts/:postId/like",
                             "POST /api/mobile/posts/:postId/save", "DELETE /api/mobile/posts/:postId/save",
                             "POST /api/mobile/posts/interaction-state"]

        /// Creates a post by the caller.
        public func create(content: String, imageUrl: String? = nil) async throws -> Post {
            try await client.call(.post, "/api/mobile/posts", "/api/mobile/posts",
                                  body: fields([("content", .string(content)), ("imageUrl", imageUrl.map { .string($0) })]), as: Post.self)
        }

        /// Likes a post (idempotent).
        public func like(_ postId: String) async throws -> PostInteractionState { try await mark(.post, "like", postId) }
        /// Unlikes a post (idempotent).
        public func unlike(_ postId: String) async throws -> PostInteractionState { try await mark(.delete, "like", postId) }
        /// Saves a post (idempotent).
        public func save(_ postId: String) async throws -> PostInteractionState { try await mark(.post, "save", postId) }
        /// Unsaves a post (idempotent).
        public func unsave(_ postId: String) async throws -> PostInteractionState { try await mark(.delete, "save", postId) }

        /// The caller's like/save state of up to 50 posts, in request order (unknown ids left out).
        public func interactionState(_ postIds: [String]) async throws -> InteractionStates {
            try await client.call(.post, "/api/mobile/posts/interaction-state", "/api/mobile/posts/interaction-state",
                                  body: ["postIds": .array(postIds.map { .string($0) })], as: InteractionStates.self)
        }

        private func mark(_ method: HTTPTransport.Method, _ what: String, _ postId: String) async throws -> PostInteractionState {
            try await client.call(method, "/api/mobile/posts/:postId/\(what)", "/api/mobile/posts/\(seg(postId))/\(what)",
                                  as: PostInteractionState.self)
        }
    }

    /// Push tokens.
    public struct Devices: Sendable {
        let client: TouchSyncClient
        static let routes = ["POST /api/devices", "DELETE /api/devices/:token"]

        /// Registers a push token (`platform`: `ios` or `android`).
        public func register(token: String, platform: String = "ios") async throws -> Device {
            try await client.call(.post, "/api/devices", "/api/devices", body: ["token": .string(token), "platform": .string(platform)],
                                  as: Device.self)
        }

        /// Unregisters a push token of the caller.
        public func unregister(token: String) async throws -> DeviceDeleted {
            try await client.call(.delete, "/api/devices/:token", "/api/devices/\(seg(token))", as: DeviceDeleted.self)
        }
    }

    /// The caller's notification feed.
    public struct Notifications: Sendable {
        let client: TouchSyncClient
        static let routes = ["GET /api/notifications"]

        /// Newest first.
        public func list(limit: Int? = nil) async throws -> [NotificationItem] {
            try await client.call(.get, "/api/notifications", "/api/notifications",
                                  query: TouchSyncClient.paging(limit: limit, before: nil), as: [NotificationItem].self)
        }
    }
}
