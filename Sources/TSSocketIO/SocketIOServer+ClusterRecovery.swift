import TSEngineIO
import TSJSON

/// What another node needs to take a session over (docs/realtime-cluster.md, "Connection state
/// recovery across nodes"): kept outside this process while the socket is connected, so that it
/// survives the process.
public struct SocketIOSessionRecord: Sendable, Equatable {
    public var sid: String
    public var pid: String
    public var namespace: String
    /// The offset prefix of the node the socket is connected to (`SocketIOServer.recoveryNode`).
    public var node: String
    public var rooms: [String]
    public var userID: String?

    public init(sid: String, pid: String, namespace: String, node: String, rooms: [String], userID: String?) {
        self.sid = sid
        self.pid = pid
        self.namespace = namespace
        self.node = node
        self.rooms = rooms
        self.userID = userID
    }

    public var json: JSONValue {
        var o: JSONObject = ["sid": .string(sid), "pid": .string(pid), "nsp": .string(namespace), "node": .string(node),
                             "rooms": .array(rooms.map(JSONValue.string))]
        if let userID { o["user"] = .string(userID) }
        return .object(o)
    }

    /// Nil when `json` is not a record (another version, or damaged).
    public init?(json: JSONValue) {
        guard let sid = json["sid"]?.stringValue, let pid = json["pid"]?.stringValue, let ns = json["nsp"]?.stringValue,
              let node = json["node"]?.stringValue, let rooms = json["rooms"]?.arrayValue else { return nil }
        self.init(sid: sid, pid: pid, namespace: ns, node: node, rooms: rooms.compactMap(\.stringValue), userID: json["user"]?.stringValue)
    }
}

/// Where sessions are mirrored for recovery on another node (a Redis key per session, with the
/// node's delivery journal beside it; `RedisSessionMirror` in the app). Every call returns at once
/// but `restore`.
public protocol SocketIOSessionMirror: AnyObject, Sendable {
    /// A session is connected (or changed rooms, or went away recoverably): keep it for the window.
    func save(_ records: [SocketIOSessionRecord])
    /// A session ended for good (the client or the server closed it): nothing to recover.
    func forget(pid: String)
    /// Takes over the session of `attempt.pid`, last connected to another node, within a bounded
    /// time: calls `attempt.install` (which puts the socket in its namespace and rooms and sends the
    /// CONNECT reply) once the events it missed can be replayed in order, replays them, and
    /// returns the socket; nil when recovery cannot be exact (the client then gets a fresh session).
    func restore(_ attempt: SocketIORemoteRestore) async -> SocketIOSocket?
}

/// A CONNECT carrying the `pid` and `offset` of a session of another node.
public struct SocketIORemoteRestore: Sendable {
    public let pid: String
    public let namespace: String
    /// The offset's prefix (the node that sent it) and counter (how far that node's sending went).
    public let offsetNode: String
    public let offsetCounter: UInt64
    public let userID: String?
    /// Puts the session's socket in its namespace and rooms and sends the CONNECT reply; nil when
    /// that socket id is connected meanwhile or the connection is gone.
    public let install: @Sendable (SocketIOSessionRecord) -> SocketIOSocket?
}

extension SocketIOServer {
    /// Mirrors this node's recoverable sessions to `mirror` (with recovery on, several nodes).
    public func setSessionMirror(_ mirror: any SocketIOSessionMirror) { sessionMirror.set(mirror) }

    /// This node's offset prefix in `namespace` (stable for the process).
    public func recoveryNode(namespace: String) -> String {
        hub.withLock { h in
            if h.recovery[namespace] == nil { h.recovery[namespace] = makeRecoveryLog() }
            return h.recovery[namespace]!.node
        }
    }

    /// The counter of the last offset this node gave in `namespace` (0 before the first).
    public func recoveryCounter(namespace: String) -> UInt64 {
        hub.withLock { $0.recovery[namespace]?.nextOffset ?? 0 }
    }

    /// The records of every connected socket with a session id (for the mirror's periodic refresh).
    public func sessionRecords() -> [SocketIOSessionRecord] {
        let sockets = hub.withLock { h in h.adapters.values.flatMap { a in a.sockets.values.filter { $0.pid != nil } } }
        return sockets.compactMap(record(of:))
    }

    func record(of socket: SocketIOSocket) -> SocketIOSessionRecord? {
        guard let pid = socket.pid else { return nil }
        let node = recoveryNode(namespace: socket.namespace)
        return SocketIOSessionRecord(sid: socket.id, pid: pid, namespace: socket.namespace, node: node,
                                     rooms: rooms(ofSocket: socket.id, namespace: socket.namespace).sorted(), userID: socket.userID)
    }

    /// After a join or leave (and on connect): the mirrored record follows the socket's rooms.
    func mirrorRooms(socketID: String, namespace: String) {
        guard let mirror = sessionMirror.value,
              let socket = hub.withLock({ $0.adapters[namespace]?.sockets[socketID] }), let r = record(of: socket) else { return }
        mirror.save([r])
    }

    /// A recoverable disconnect keeps the record for the window from now (with the rooms the
    /// socket was in); any other ends it.
    func mirrorDisconnect(_ socket: SocketIOSocket, kept: Bool, rooms: Set<String>) {
        guard let pid = socket.pid, let mirror = sessionMirror.value else { return }
        guard kept else { return mirror.forget(pid: pid) }
        mirror.save([SocketIOSessionRecord(sid: socket.id, pid: pid, namespace: socket.namespace, node: recoveryNode(namespace: socket.namespace),
                                           rooms: rooms.sorted(), userID: socket.userID)])
    }

    /// A CONNECT whose offset another node gave: the mirror takes the session over, or nil.
    func restoreFromAnotherNode(pid: String, offset: String, userID: String?, data: JSONValue, handshake: SocketIOHandshake,
                                client: SocketIOClient) async -> SocketIOSocket? {
        let ns = handshake.namespace
        guard let mirror = sessionMirror.value, let parsed = SocketIORecoveryLog.parse(offset: offset),
              parsed.node != recoveryNode(namespace: ns) else { return nil }
        let session = client.session
        let attempt = SocketIORemoteRestore(pid: pid, namespace: ns, offsetNode: parsed.node, offsetCounter: parsed.counter, userID: userID) {
            [self] record in
            let socket = SocketIOSocket(id: record.sid, namespace: ns, userID: userID, data: data, handshake: handshake, session: session,
                                        client: client, server: self, pid: record.pid, recovered: true)
            guard client.add(socket) else { return nil }
            engine.sessionEstablished(client.session)
            let added: Bool = hub.withLock { h in
                if h.namespaceOf[socket.id] != nil { return false }
                h.adapters[ns, default: SocketIONamespaceAdapter(namespace: ns)].add(socket, rooms: Set(record.rooms))
                h.namespaceOf[socket.id] = ns
                return true
            }
            guard added else {
                _ = client.remove(socket)
                return nil
            }
            socket.sendPacket(SocketIOPacket(type: .connect, namespace: ns, data: ["sid": .string(socket.id), "pid": .string(record.pid)]))
            return socket
        }
        guard let socket = await mirror.restore(attempt) else { return nil }
        mirrorRooms(socketID: socket.id, namespace: ns)
        return socket
    }
}
