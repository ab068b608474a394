import Logging
import TSContract
import TSDomain
import TSJSON
import TSSocketIO
import TSStorage

/// Client → server events (docs/realtime.md), served by the same domain services as REST.
/// Every handler answers its ack with the result or `{"error": {code, message}}`; a bad payload
/// never kills the socket.
public struct RealtimeHandlers: Sendable {
    let domain: TouchSyncDomain
    let broadcaster: RealtimeBroadcaster
    /// The broadcaster's server and log: the handlers answer on the sockets it emits to, so the
    /// two cannot be wired to different ones.
    var hub: SocketIOServer { broadcaster.hub }
    var logger: Logger { broadcaster.logger }

    public init(domain: TouchSyncDomain, broadcaster: RealtimeBroadcaster) {
        self.domain = domain
        self.broadcaster = broadcaster
    }

    /// The token of a Socket.IO handshake: CONNECT auth `{"token"}`, `?token=`, or `Authorization: Bearer`.
    public static func token(auth: JSONValue?, query: [String: String], authorization: String?) -> String? {
        if let t = auth?["token"]?.stringValue, !t.isEmpty { return t }
        if let t = query["token"], !t.isEmpty { return t }
        return BearerToken.parse(authorization)
    }

    public func install() {
        let domain = self.domain
        let logger = self.logger
        let broadcaster = self.broadcaster
        hub.setAuthenticator { handshake, auth in
            guard let token = RealtimeHandlers.token(auth: auth, query: handshake.query, authorization: handshake.header("Authorization")) else {
                return .reject(message: "unauthorized")
            }
            let user: PublicUser
            do { user = try await domain.auth.authenticate(token: token) } catch is DatabaseOverloadedError {
                return .reject(message: "server busy, retry shortly")  // database.maxQueuedReads reads already waiting
            } catch is DatabaseUnavailableError {
                return .reject(message: "database unreachable, retry shortly")  // PostgreSQL unreachable
            } catch {
                return .reject(message: "unauthorized")
            }
            return .accept(userID: user.id, data: user.json)
        }
        hub.onConnect { socket in
            guard let uid = socket.userID else { return }
            socket.join(RealtimeConfiguration.userChannel(uid))
            // Back in its rooms by connection state recovery: the events waiting there now have a listener.
            if socket.recovered { broadcaster.startQueuedReads(channels: socket.rooms) }
            logger.info("socket connected sid=\(socket.id) user=\(uid) transport=\(socket.transport)")
        }
        hub.onDisconnect { socket, reason in
            logger.info("socket disconnected sid=\(socket.id) user=\(socket.userID ?? "-") reason=\(reason)")
        }
        let events = RealtimeEvents.self
        on(events.roomJoin) { socket, request in try await self.join(socket, roomId: request.roomId) }
        on(events.roomLeave) { socket, request in
            socket.leave(RealtimeConfiguration.roomChannel(request.roomId))
            return RoomLeaveAck(roomId: request.roomId)
        }
        on(events.elementCreate) { socket, request in
            ElementPayload(try await domain.elements.create(roomId: request.roomId, actor: socket.userID ?? "", input: request.fields,
                                                            originSocketId: socket.id))
        }
        on(events.elementUpdate) { socket, request in
            ElementPayload(try await domain.elements.update(roomId: request.roomId, elementId: request.elementId, actor: socket.userID ?? "",
                                                            input: request.changes, originSocketId: socket.id))
        }
        on(events.elementDelete) { socket, request in
            try await domain.elements.delete(roomId: request.roomId, elementId: request.elementId, actor: socket.userID ?? "",
                                             originSocketId: socket.id)
            return ElementDeleteAck(elementId: request.elementId)
        }
        on(events.roomClear) { socket, request in
            let n = try await domain.elements.clear(roomId: request.roomId, actor: socket.userID ?? "", originSocketId: socket.id)
            return RoomClearAck(roomId: request.roomId, deleted: n)
        }
        on(events.reactionToggle) { socket, request in
            try await domain.reactions.toggle(roomId: request.roomId, elementId: request.elementId, actor: socket.userID ?? "",
                                              originSocketId: socket.id)
        }
    }

    /// Registers the handler of a declared event: the payload (its first argument) must be an
    /// object; the event's write limit is spent, then the payload is read into its type and
    /// `body` runs; its result, or the error, answers the ack.
    private func on<Payload, Ack>(_ event: RealtimeClientEvent<Payload, Ack>,
                                  _ body: @escaping @Sendable (SocketIOSocket, Payload) async throws -> Ack) {
        let logger = self.logger
        let limits = domain.writeLimits
        let name = event.name
        let limit = event.limit
        hub.on(name) { socket, args, ack in
            do {
                guard let user = socket.userID else { throw DomainError.unauthorized("unauthorized") }
                guard let first = args.first else { throw DomainError.validation(field: "payload", message: "is required") }
                // Not an object: the REST body's refusal (`body: must be a JSON object`).
                _ = try Input(value: first)
                // Before the payload is read, as the REST routes take it before their body is checked.
                if let limit { try limits.take(limit, user: user) }
                let result = try await body(socket, try Payload.decode(first))
                ack?.send([try JSONValueEncoder.encode(result)])
            } catch is RoomDeliveryStuck {  // the room's queue is full (RealtimeConfiguration.maxQueuedEventsPerRoom)
                ack?.send([Self.errorPayload(code: "UNAVAILABLE", message: "The room's events are not being delivered right now; retry shortly")])
            } catch {
                // The REST routes' mapping (`ErrorReply`), so a refusal has the same code and
                // message on both; the ack carries no `field` (the socket wire never had one).
                if let e = ErrorReply(error) {
                    ack?.send([Self.errorPayload(code: e.code, message: e.message)])
                    return
                }
                logger.error("socket event \(name) from sid=\(socket.id) failed: \(error)")
                ack?.send([Self.errorPayload(code: "INTERNAL", message: "Internal server error")])
            }
        }
    }

    /// `room:join` (docs/realtime.md "Joining"): member check, then the elements are read and
    /// marked seen in one write whose commit places the join in the room's event order; the
    /// room's drain sends this socket one `elements:batch` and puts it in the room's channel at
    /// that place, so the batch and the events after it hold every element exactly once. The ack
    /// follows the batch.
    private func join(_ socket: SocketIOSocket, roomId: String) async throws -> RoomJoinAck {
        guard let uid = socket.userID else { throw DomainError.unauthorized("unauthorized") }
        let ticket = DeliveryTicket()
        let broadcaster = self.broadcaster
        let elements = try await domain.elements.join(roomId: roomId, viewer: uid) { read in  // 404 / 403 for non-members
            broadcaster.enqueueJoin(.init(socket: socket, roomId: roomId, elements: read.elements, afterSeq: read.afterSeq, ticket: ticket))
        }
        guard await ticket.wait() else {
            throw RoomDeliveryStuck()
        }
        return RoomJoinAck(roomId: roomId, elementCount: elements.count)
    }

    /// A `room:join` dropped because its room's delivery queue was full.
    struct RoomDeliveryStuck: Error {}

    static func errorPayload(code: String, message: String) -> JSONValue {
        .object(["error": .object(["code": .string(code), "message": .string(message)])])
    }
}
