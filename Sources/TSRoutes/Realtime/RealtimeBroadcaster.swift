import Logging
import TSDomain
import TSJSON
import TSSocketIO

/// Turns committed domain events into Socket.IO emits (CONTRACT.md §3): room events to the
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

    public func publish(_ event: DomainEvent) {
        do { try broadcast(event) } catch {
            logger.error("broadcast of \(event.name) in room \(event.roomId) failed: \(error)")
        }
    }

    private func broadcast(_ event: DomainEvent) throws {
        let room = RealtimeConfiguration.roomChannel(event.roomId)
        let except = event.originSocketId
        switch event.kind {
        case .elementCreated(let element):
            hub.emit(event.name, [.object(["element": element.json])], toRoom: room, except: except)
            try global("element:created:global", ["roomId": .string(event.roomId), "elementId": .string(element.id),
                                                  "createdBy": .string(element.createdBy), "type": .string(element.type.rawValue)], roomId: event.roomId)
        case .elementUpdated(let element):
            if element.reactions == nil {
                hub.emit(event.name, [.object(["element": element.json])], toRoom: room, except: except)
            } else {
                try perViewer(room: room, except: except, elementId: element.id) { reacted in
                    [.object(["element": element.viewed(hasReacted: reacted).json])]
                }.forEach { hub.emit(event.name, $0.args, toSocket: $0.socket) }
            }
        case .elementDeleted(let elementId):
            hub.emit(event.name, [.object(["elementId": .string(elementId), "roomId": .string(event.roomId)])], toRoom: room, except: except)
            try global("element:deleted:global", ["roomId": .string(event.roomId), "elementId": .string(elementId),
                                                  "deletedBy": .string(event.actorId)], roomId: event.roomId)
        case .roomCleared:
            let payload: JSONValue = .object(["roomId": .string(event.roomId), "clearedBy": .string(event.actorId)])
            hub.emit(event.name, [payload], toRoom: room, except: except)
            try global("room:cleared:global", payload.objectValue!, roomId: event.roomId)
        case .roomUpdated:
            guard let domain else { return }
            var cache: [String: JSONValue] = [:]
            for socket in hub.sockets(inRoom: room) where socket.id != except {
                guard let uid = socket.userID else { continue }
                if cache[uid] == nil, let r = try domain.rooms.room(roomId: event.roomId, viewer: uid) { cache[uid] = r.json }
                if let json = cache[uid] { hub.emit(event.name, [.object(["room": json])], toSocket: socket.id) }
            }
        case .messageCreated(let message):
            hub.emit(event.name, [.object(["message": message.json])], toRoom: room, except: except)
        case .reactionAdded(let elementId, let reaction, let stats):
            try perViewer(room: room, except: except, elementId: elementId) { reacted in
                [.object(["elementId": .string(elementId), "roomId": .string(event.roomId), "reaction": reaction.json,
                          "stats": stats.viewed(hasReacted: reacted).json])]
            }.forEach { hub.emit(event.name, $0.args, toSocket: $0.socket) }
        case .reactionRemoved(let elementId, let userId, let stats):
            try perViewer(room: room, except: except, elementId: elementId) { reacted in
                [.object(["elementId": .string(elementId), "roomId": .string(event.roomId), "userId": .string(userId),
                          "stats": stats.viewed(hasReacted: reacted).json])]
            }.forEach { hub.emit(event.name, $0.args, toSocket: $0.socket) }
        }
    }

    /// The recipients of a room event with their own `hasReacted`, payloads built once per variant.
    private func perViewer(room: String, except: String?, elementId: String,
                           _ build: (Bool) -> [JSONValue]) throws -> [(socket: String, args: [JSONValue])] {
        let sockets = hub.sockets(inRoom: room).filter { $0.id != except }
        guard !sockets.isEmpty, let domain else { return [] }
        let users = Array(Set(sockets.compactMap(\.userID)))
        let reacted = try domain.elements.reactedUsers(elementId: elementId, among: users)
        let yes = build(true)
        let no = build(false)
        return sockets.map { s in (s.id, s.userID.map(reacted.contains) == true ? yes : no) }
    }

    /// A global event (seed 003) to every member's sockets, or to every socket.
    private func global(_ name: String, _ payload: JSONObject, roomId: String) throws {
        switch configuration.globalEvents {
        case .all:
            for socket in hub.connectedSockets { hub.emit(name, [.object(payload)], toSocket: socket.id) }
        case .members:
            guard let domain else { return }
            for member in try domain.rooms.memberIds(roomId: roomId) {
                hub.emit(name, [.object(payload)], toRoom: RealtimeConfiguration.userChannel(member), except: nil)
            }
        }
    }
}
