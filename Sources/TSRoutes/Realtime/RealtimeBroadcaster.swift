import Logging
import TSDomain
import TSJSON
import TSSocketIO

/// Turns committed domain events into Socket.IO emits (docs/realtime.md): room events to the
/// sockets that joined the room except the originating socket, global events to members (or to
/// everyone), and payloads that depend on the viewer (`hasReacted`, badges) computed per user.
public final class RealtimeBroadcaster: DomainEventPublisher, @unchecked Sendable {
    // Invariant: `domain` is set once, before the server starts accepting connections, and only
    // read afterwards; everything else is immutable.
    private let hub: SocketIOServer
    private let configuration: RealtimeConfiguration
    private let logger: Logger
    nonisolated(unsafe) private var domain: TouchSyncDomain?

    public init(hub: SocketIOServer, configuration: RealtimeConfiguration, logger: Logger) {
        self.hub = hub
        self.configuration = configuration
        self.logger = logger
    }

    /// Called once while wiring the server, before any event can be published.
    public func attach(_ domain: TouchSyncDomain) { self.domain = domain }

    public func publish(_ event: DomainEvent) async {
        do { try await broadcast(event) } catch {
            logger.error("broadcast of \(event.name) in room \(event.roomId) failed: \(error)")
        }
    }

    private func broadcast(_ event: DomainEvent) async throws {
        let room = RealtimeConfiguration.roomChannel(event.roomId)
        let except = event.originSocketId
        switch event.kind {
        case .elementCreated(let element):
            // Both events leave together: a member's socket gets them in one write.
            let global = await global("element:created:global", ["roomId": .string(event.roomId), "elementId": .string(element.id),
                                                               "createdBy": .string(element.createdBy), "type": .string(element.type.rawValue)], roomId: event.roomId)
            hub.emit([SocketIOEmission(event.name, [.object(["element": element.json])], .room(room, except: except))] + global)
        case .elementUpdated(let element):
            if element.reactions == nil {
                hub.emit(event.name, [.object(["element": element.json])], to: .room(room, except: except))
            } else {
                // `element` is the actor's view: what the log shows when nobody listens.
                try await emitPerViewer(event.name, room: room, except: except, elementId: element.id,
                                  actorHasReacted: element.reactions?.hasReacted ?? false) { reacted in
                    [.object(["element": element.viewed(hasReacted: reacted).json])]
                }
            }
        case .elementDeleted(let elementId):
            let global = await global("element:deleted:global", ["roomId": .string(event.roomId), "elementId": .string(elementId),
                                                               "deletedBy": .string(event.actorId)], roomId: event.roomId)
            hub.emit([SocketIOEmission(event.name, [.object(["elementId": .string(elementId), "roomId": .string(event.roomId)])],
                                       .room(room, except: except))] + global)
        case .roomCleared:
            let payload: JSONObject = ["roomId": .string(event.roomId), "clearedBy": .string(event.actorId)]
            let global = await global("room:cleared:global", payload, roomId: event.roomId)
            hub.emit([SocketIOEmission(event.name, [.object(payload)], .room(room, except: except))] + global)
        case .roomUpdated:
            // Badges are the recipient's own: one payload (encoded once) per user.
            guard let domain else { return }
            var byUser: [String: [String]] = [:]
            for socket in hub.sockets(inRoom: room) where socket.id != except {
                if let uid = socket.userID { byUser[uid, default: []].append(socket.id) }
            }
            var emissions: [SocketIOEmission] = []
            for (uid, sockets) in byUser {
                guard let r = try await domain.rooms.room(roomId: event.roomId, viewer: uid) else { continue }
                emissions.append(SocketIOEmission(event.name, [.object(["room": r.json])], .sockets(sockets, room: room, except: except)))
            }
            if !emissions.isEmpty { hub.emit(emissions) }
            if byUser.isEmpty, let r = try await domain.rooms.room(roomId: event.roomId, viewer: event.actorId) {
                // Nobody listens: still logged (docs/test-mode.md), with the actor's view and 0 recipients.
                hub.emit(event.name, [.object(["room": r.json])], to: .sockets([], room: room, except: except))
            }
        case .messageCreated(let message):
            hub.emit(event.name, [.object(["message": message.json])], to: .room(room, except: except))
        case .reactionAdded(let elementId, let reaction, let stats):
            try await emitPerViewer(event.name, room: room, except: except, elementId: elementId, actorHasReacted: true) { reacted in
                [.object(["elementId": .string(elementId), "roomId": .string(event.roomId), "reaction": reaction.json,
                          "stats": stats.viewed(hasReacted: reacted).json])]
            }
        case .reactionRemoved(let elementId, let userId, let stats):
            try await emitPerViewer(event.name, room: room, except: except, elementId: elementId, actorHasReacted: false) { reacted in
                [.object(["elementId": .string(elementId), "roomId": .string(event.roomId), "userId": .string(userId),
                          "stats": stats.viewed(hasReacted: reacted).json])]
            }
        }
    }

    /// Sends a room event whose payload depends on whether each recipient has reacted to the
    /// element: one group per variant, each encoded once. With no recipient the event is still
    /// emitted to nobody, so the event log records it (docs/test-mode.md) with the variant the
    /// actor would see (`actorHasReacted`) and 0 recipients.
    private func emitPerViewer(_ name: String, room: String, except: String?, elementId: String, actorHasReacted: Bool,
                               _ build: (Bool) -> [JSONValue]) async throws {
        let sockets = hub.sockets(inRoom: room).filter { $0.id != except }
        guard !sockets.isEmpty else {
            hub.emit(name, build(actorHasReacted), to: .sockets([], room: room, except: except))
            return
        }
        guard let domain else { return }
        let users = Array(Set(sockets.compactMap(\.userID)))
        let reacted = try await domain.elements.reactedUsers(elementId: elementId, among: users)
        var yes: [String] = []
        var no: [String] = []
        for s in sockets {
            if let uid = s.userID, reacted.contains(uid) { yes.append(s.id) } else { no.append(s.id) }
        }
        var emissions: [SocketIOEmission] = []
        if !yes.isEmpty { emissions.append(SocketIOEmission(name, build(true), .sockets(yes, room: room, except: except))) }
        if !no.isEmpty { emissions.append(SocketIOEmission(name, build(false), .sockets(no, room: room, except: except))) }
        hub.emit(emissions)
    }

    /// A global event (keeps MyRooms counts live without joining) to every member's sockets, or to every socket: the emission to
    /// send along with the room event (members are read first, so nothing leaves before both
    /// are ready). Each member's channel is recorded as its own emit, as before.
    /// When the members cannot be read, the room event still goes out (and the failure is logged).
    private func global(_ name: String, _ payload: JSONObject, roomId: String) async -> [SocketIOEmission] {
        switch configuration.globalEvents {
        case .all:
            return [SocketIOEmission(name, [.object(payload)], .sockets(hub.connectedSockets.map(\.id), room: "*", except: nil))]
        case .members:
            guard let domain else { return [] }
            do {
                let channels = try await domain.rooms.memberIds(roomId: roomId).map(RealtimeConfiguration.userChannel)
                return [SocketIOEmission(name, [.object(payload)], .rooms(channels))]
            } catch {
                logger.error("\(name) in room \(roomId) not sent: reading the members failed: \(error)")
                return []
            }
        }
    }
}
