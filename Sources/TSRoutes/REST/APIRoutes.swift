import TSContract
import TSDomain
import TSHTTP
import TSJSON

/// Every REST route of docs/api.md (the Operations routes live in `OperationsRoutes`).
public struct APIRoutes: Sendable {
    let domain: TouchSyncDomain
    let authenticator: Authenticator
    /// Called with the user id after `POST /api/auth/logout` revoked the user's tokens: the server
    /// disconnects that user's Socket.IO sockets, which were authenticated with revoked tokens.
    let onLogout: @Sendable (String) -> Void

    /// Peers whose `X-Forwarded-For` names the client (`server.trustedProxies`): the login throttle
    /// counts failures per real client, not per proxy.
    let trustedProxies: TrustedProxies

    public init(domain: TouchSyncDomain, trustedProxies: TrustedProxies = .none, onLogout: @escaping @Sendable (String) -> Void = { _ in }) {
        self.domain = domain
        self.trustedProxies = trustedProxies
        self.onLogout = onLogout
        authenticator = Authenticator(auth: domain.auth)
    }

    public func register(into router: inout RouteTable) {
        let d = domain
        let a = authenticator
        let loggedOut = onLogout
        let proxies = trustedProxies

        // Auth and users
        let limits = d.writeLimits
        router.post("/api/auth/register", Authenticator.unauthenticated { ctx in
            // Per client address, before the password is hashed: a new account must not be a way
            // to fresh per-user budgets (limits.signUpsPerHour).
            try limits.take(.signUp, user: proxies.clientAddress(of: ctx.request))
            return Reply.data(try await d.auth.register(ctx.input()).json, status: 201)
        })
        router.post("/api/auth/login", Authenticator.unauthenticated { ctx in
            Reply.data(try await d.auth.login(ctx.input(), clientAddress: proxies.clientAddress(of: ctx.request)).json)
        })
        router.get("/api/auth/me", a.wrap { ctx in ReadPaths.data { ctx.user.writeJSON(into: &$0) } })
        router.post("/api/auth/refresh", Authenticator.unauthenticated { ctx in
            guard let token = BearerToken.parse(ctx.request.header("Authorization")) else { throw DomainError.unauthorized("Missing bearer token") }
            return Reply.data(try await d.auth.refresh(token: token).json)
        })
        router.post("/api/auth/logout", a.wrap { ctx in
            try await d.auth.logout(userId: ctx.user.id)
            loggedOut(ctx.user.id)
            return Reply.data(.object(["userId": .string(ctx.user.id), "loggedOut": true]))
        })
        // The account and its personal data (AccountService); its sockets are then kicked as on logout.
        router.delete("/api/auth/me", a.wrap { ctx in
            let deletion = try await d.accounts.delete(userId: ctx.user.id, input: ctx.input(), clientAddress: proxies.clientAddress(of: ctx.request))
            loggedOut(ctx.user.id)
            return Reply.data(deletion.json)
        })
        router.get("/api/auth/me/export", a.wrap { ctx in Reply.data(try await d.accounts.export(userId: ctx.user.id)) })

        // Rooms
        router.post("/api/rooms", a.wrap { ctx in
            try limits.take(.roomCreate, user: ctx.user.id)
            return Reply.data(try await d.rooms.create(actor: ctx.user.id, input: ctx.optionalInput()).json, status: 201)
        })
        router.get("/api/rooms/my-rooms", a.wrapRead { token, ctx in try await ReadPaths.myRooms(d, token, ctx) })
        router.get("/api/rooms/:roomId", a.wrap { ctx in
            Reply.data(try await d.rooms.detail(roomId: ctx.param("roomId"), viewer: ctx.user.id).json)
        })
        router.patch("/api/rooms/:roomId", a.wrap { ctx in
            try limits.take(.membershipChange, user: ctx.user.id)
            return Reply.data(try await d.rooms.rename(roomId: ctx.param("roomId"), actor: ctx.user.id, input: ctx.input(),
                                                originSocketId: ctx.originSocketId).json)
        })
        router.post("/api/rooms/:roomId/members", a.wrap { ctx in
            try limits.take(.membershipChange, user: ctx.user.id)
            let roomId = ctx.param("roomId")
            let user = try await d.rooms.addMember(roomId: roomId, actor: ctx.user.id, input: ctx.input())
            return Reply.data(.object(["roomId": .string(roomId), "user": user.json]), status: 201)
        })
        router.delete("/api/rooms/:roomId/members/me", a.wrap { ctx in
            try limits.take(.membershipChange, user: ctx.user.id)
            let roomId = ctx.param("roomId")
            try await d.rooms.leave(roomId: roomId, actor: ctx.user.id)
            return Reply.data(.object(["roomId": .string(roomId), "userId": .string(ctx.user.id)]))
        })
        router.post("/api/rooms/:roomId/seen", a.wrap { ctx in
            try limits.take(.readMarker, user: ctx.user.id)
            return Reply.data(try await d.rooms.markSeen(roomId: ctx.param("roomId"), actor: ctx.user.id).json)
        })

        // Elements
        router.get("/api/rooms/:roomId/elements", a.wrap { ctx in
            Reply.data(.array(try await d.elements.list(roomId: ctx.param("roomId"), viewer: ctx.user.id).map(\.json)))
        })
        router.post("/api/rooms/:roomId/elements", a.wrap { ctx in
            try limits.take(.elementWrite, user: ctx.user.id)
            return Reply.data(try await d.elements.create(roomId: ctx.param("roomId"), actor: ctx.user.id, input: ctx.input(),
                                                   originSocketId: ctx.originSocketId).json, status: 201)
        })
        router.delete("/api/rooms/:roomId/elements", a.wrap { ctx in
            try limits.take(.elementWrite, user: ctx.user.id)
            let roomId = ctx.param("roomId")
            let n = try await d.elements.clear(roomId: roomId, actor: ctx.user.id, originSocketId: ctx.originSocketId)
            return Reply.data(.object(["roomId": .string(roomId), "deleted": .int(Int64(n))]))
        })
        router.patch("/api/rooms/:roomId/elements/:elementId", a.wrap { ctx in
            try limits.take(.elementWrite, user: ctx.user.id)
            return Reply.data(try await d.elements.update(roomId: ctx.param("roomId"), elementId: ctx.param("elementId"), actor: ctx.user.id,
                                                   input: ctx.input(), originSocketId: ctx.originSocketId).json)
        })
        router.delete("/api/rooms/:roomId/elements/:elementId", a.wrap { ctx in
            try limits.take(.elementWrite, user: ctx.user.id)
            let id = ctx.param("elementId")
            try await d.elements.delete(roomId: ctx.param("roomId"), elementId: id, actor: ctx.user.id, originSocketId: ctx.originSocketId)
            return Reply.data(.object(["id": .string(id)]))
        })

        // Reactions
        // The token's user is read inside the toggle's own write (one trip to the writer thread;
        // bench/history/2026-11.md "Toggle under load, round 3").
        router.post("/api/rooms/:roomId/elements/:elementId/reactions/toggle", a.wrapRead { token, ctx in
            try limits.take(.reactionToggle, user: token.userId)  // the token's subject: checked before the write
            let result = try await d.reactions.toggle(roomId: ctx.param("roomId"), elementId: ctx.param("elementId"),
                                                      token: token, originSocketId: ctx.originSocketId)
            return (result.reaction.user, ReadPaths.data { result.writeJSON(bytes: &$0) })  // bytes, no tree (Reaction+JSONShape.swift)
        })
        router.get("/api/rooms/:roomId/elements/:elementId/reactions", a.wrap { ctx in
            Reply.data(try await d.reactions.list(roomId: ctx.param("roomId"), elementId: ctx.param("elementId"), viewer: ctx.user.id,
                                            limit: ctx.limit(), before: ctx.before).json)
        })

        // Messages
        router.post("/api/rooms/:roomId/messages", a.wrap { ctx in
            try limits.take(.message, user: ctx.user.id)
            return Reply.data(try await d.messages.send(roomId: ctx.param("roomId"), actor: ctx.user.id, input: ctx.input(),
                                                 originSocketId: ctx.originSocketId).json, status: 201)
        })
        router.get("/api/rooms/:roomId/messages", a.wrap { ctx in
            Reply.data(.array(try await d.messages.list(roomId: ctx.param("roomId"), viewer: ctx.user.id, limit: ctx.limit(),
                                                  before: ctx.before).map(\.json)))
        })
        router.post("/api/rooms/:roomId/messages/read", a.wrap { ctx in
            try limits.take(.readMarker, user: ctx.user.id)
            return Reply.data(try await d.rooms.markMessagesRead(roomId: ctx.param("roomId"), actor: ctx.user.id).json)
        })

        // Posts (mobile envelope)
        router.post("/api/mobile/posts", a.wrap { ctx in
            try limits.take(.postCreate, user: ctx.user.id)
            return Reply.mobile("Post created", try await d.posts.create(actor: ctx.user.id, input: ctx.input()).json, status: 201)
        })
        for (path, interaction, noun) in [("like", PostService.Interaction.like, "liked"), ("save", .save, "saved")] {
            router.post("/api/mobile/posts/:postId/\(path)", a.wrap { ctx in
                try limits.take(.postInteraction, user: ctx.user.id)
                let s = try await d.posts.set(interaction, on: true, postId: ctx.param("postId"), actor: ctx.user.id)
                return Reply.mobile("Post \(noun)", s.json)
            })
            router.delete("/api/mobile/posts/:postId/\(path)", a.wrap { ctx in
                try limits.take(.postInteraction, user: ctx.user.id)
                let s = try await d.posts.set(interaction, on: false, postId: ctx.param("postId"), actor: ctx.user.id)
                return Reply.mobile("Post un\(noun)", s.json)
            })
        }
        router.post("/api/mobile/posts/interaction-state", a.wrapRead { token, ctx in try await ReadPaths.interactionState(d, token, ctx) })

        // Devices and notifications
        router.post("/api/devices", a.wrap { ctx in
            try limits.take(.deviceRegistration, user: ctx.user.id)  // and at most limits.maxDevicesPerUser kept
            return Reply.data(try await d.devices.register(actor: ctx.user.id, input: ctx.input()), status: 201)
        })
        router.delete("/api/devices/:token", a.wrap { ctx in
            let token = ctx.param("token")
            try await d.devices.unregister(actor: ctx.user.id, token: token)
            return Reply.data(.object(["token": .string(token)]))
        })
        router.get("/api/notifications", a.wrap { ctx in
            Reply.data(.array(try await d.notifications.list(userId: ctx.user.id, limit: ctx.limit()).map(\.json)))
        })
    }
}
