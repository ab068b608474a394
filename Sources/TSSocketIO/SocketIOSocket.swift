import TSSockets
import TSEngineIO
import TSJSON

/// One client connected to one namespace (Socket.IO v5, "Connection to a namespace").
///
/// Immutable apart from room membership, which lives in its namespace's adapter in the server's
/// hub (under the hub lock).
/// Every socket is a member of the room named by its own id.
public final class SocketIOSocket: Sendable {
    /// The socket id sent in the CONNECT reply (`40{"sid":"…"}`); distinct from the Engine.IO sid.
    public let id: String
    public let namespace: String
    public let userID: String?
    /// Application data from the authenticator (kept packed: parsed again on each read).
    public var data: JSONValue { packedData.value }
    private let packedData: SocketIOPackedJSON
    public let handshake: SocketIOHandshake
    /// Unix time of the connection, seconds.
    public let connectedAt: Int64
    /// Connection state recovery: the private session id sent in the CONNECT reply (nil when
    /// recovery is off), and whether this socket took over a disconnected session (same id,
    /// rooms and the events it missed).
    public let pid: String?
    public let recovered: Bool
    let session: EngineIOSession
    let client: SocketIOClient
    let server: SocketIOServer

    init(id: String, namespace: String, userID: String?, data: JSONValue, handshake: SocketIOHandshake,
         session: EngineIOSession, client: SocketIOClient, server: SocketIOServer, pid: String? = nil, recovered: Bool = false) {
        self.id = id
        self.pid = pid
        self.recovered = recovered
        self.namespace = namespace
        self.userID = userID
        packedData = SocketIOPackedJSON(data)
        self.handshake = handshake
        self.session = session
        self.client = client
        self.server = server
        connectedAt = Int64(time(nil))
    }

    /// The Engine.IO session id of the underlying connection.
    public var engineSessionID: String { session.id }
    public var transport: EngineTransport { session.transport }
    public var isConnected: Bool { server.socket(id: id) === self }
    /// The rooms of this socket's namespace it is in (rooms are per namespace).
    public var rooms: Set<String> { server.rooms(ofSocket: id, namespace: namespace) }

    public func join(_ room: String) { server.join(socketID: id, namespace: namespace, room: room) }
    public func leave(_ room: String) { server.leave(socketID: id, namespace: namespace, room: room) }

    /// Sends an EVENT to this socket.
    public func emit(_ event: String, _ args: [JSONValue]) { emit(event, args, attachments: []) }

    /// Sends a BINARY_EVENT when `attachments` is not empty (`args` hold
    /// `SocketIOPacket.placeholder(k)` where attachment k goes).
    public func emit(_ event: String, _ args: [JSONValue], attachments: [[UInt8]]) {
        if server.configuration.recoveryEnabled {
            // Kept with an offset, so a recovered session gets it again (as the reference does).
            server.emitRecoverable(event, args, attachments: attachments, to: self)
            return
        }
        let ok = sendPacket(SocketIOPacketCodec.event(event, args, namespace: namespace, attachments: attachments))
        server.countEmit(delivered: ok ? 1 : 0, dropped: ok ? 0 : 1)
    }

    /// Sends an EVENT asking for an ACK and waits for it (or `timeout`, default
    /// `configuration.ackTimeout`).
    public func emitWithAck(_ event: String, _ args: [JSONValue], timeout: Duration? = nil) async -> Result<[JSONValue], SocketIOAckError> {
        let wait = timeout ?? server.configuration.ackTimeout
        return await withCheckedContinuation { cont in
            guard let ackID = client.registerAck(cont, timeoutNanoseconds: wait.clockNanoseconds) else {
                cont.resume(returning: .failure(.disconnected))
                return
            }
            let ok = sendPacket(SocketIOPacketCodec.event(event, args, namespace: namespace, ackID: ackID))
            server.countEmit(delivered: ok ? 1 : 0, dropped: ok ? 0 : 1)
            if !ok { client.resolveAck(ackID, .failure(.disconnected)) }
        }
    }

    /// Server-side disconnect of this namespace (sends DISCONNECT `1`); `closeTransport` also
    /// closes the whole Engine.IO connection.
    public func disconnect(closeTransport: Bool = false) {
        if client.remove(self) {
            _ = sendPacket(SocketIOPacket(type: .disconnect, namespace: namespace))
            server.socketDidDisconnect(self, reason: "server namespace disconnect")
        }
        if closeTransport { session.close(reason: EngineCloseReason.forcedClose) }
    }

    /// Encodes and sends one packet (text part + binary attachments, atomically ordered).
    @discardableResult
    func sendPacket(_ p: SocketIOPacket) -> Bool {
        session.sendPreEncoded(SocketIOServer.preEncode(p))
    }
}
