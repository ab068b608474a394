import Foundation
import Logging
import TSCrypto
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets

/// The Socket.IO v5 hub (Socket.IO v5 protocol over Engine.IO v4): namespaces, auth, rooms,
/// events, acks and broadcasts. Mount `handle(_:)` at `/socket.io/*`.
///
/// Thread-safety and invariants:
/// - `hub` (lock: `LockedValue`) holds one `SocketIONamespaceAdapter` per namespace: the
///   namespace's connected sockets and its rooms (rooms are namespace-local, Socket.IO v5). A
///   socket is in its namespace's adapter from its CONNECT reply until its disconnect, and always
///   in the room named by its id. `namespaceOf` maps a socket id to its namespace.
/// - `handlers` (lock) holds the application callbacks; they are read, then called with no
///   lock held.
/// - `counters` (lock) holds the emit/drop/slow-consumer counters.
/// - Each lock is a leaf: no lock is held while another is taken or while calling out
///   (sessions, handlers, the network). Per-connection state lives in `SocketIOClient`
///   behind its own leaf lock.
/// - Incoming packets of one connection run in order on that connection's mailbox Task (started
///   when a packet arrives, ended when the mailbox is empty); event handlers never run on an
///   event-loop thread (why: `SocketIOClient.enqueue`).
// @unchecked Sendable: mutable state is only in the three `LockedValue`s described above.
public final class SocketIOServer: @unchecked Sendable {
    public typealias EventHandler = @Sendable (SocketIOSocket, [JSONValue], SocketIOAck?) async -> Void
    public typealias EventDataHandler = @Sendable (SocketIOSocket, SocketIOEventData, SocketIOAck?) async -> Void
    public typealias Authenticator = @Sendable (SocketIOHandshake, JSONValue?) async -> SocketIOAuthResult

    struct Hub {
        var adapters: [String: SocketIONamespaceAdapter] = [:]
        var namespaceOf: [String: String] = [:]
        /// Connection state recovery per namespace (only when enabled).
        var recovery: [String: SocketIORecoveryLog] = [:]

        func socket(id: String) -> SocketIOSocket? {
            namespaceOf[id].flatMap { adapters[$0]?.sockets[id] }
        }
    }

    struct Handlers {
        var authenticator: Authenticator?
        var onConnect: (@Sendable (SocketIOSocket) -> Void)?
        var onDisconnect: (@Sendable (SocketIOSocket, String) -> Void)?
        var events: [String: EventDataHandler] = [:]
        var emitObserver: (@Sendable (SocketIOEmitRecord) -> Void)?
    }

    public let configuration: SocketIOConfiguration
    public let engine: EngineIOServer
    let logger: Logger
    let hub = LockedValue(Hub())
    let handlers = LockedValue(Handlers())
    let counters = LockedValue(SocketIOStats())
    /// Recovery across nodes (SocketIOServer+ClusterRecovery.swift), unset on a node alone: the
    /// mirror is built on this hub, so it registers itself once, before the server starts.
    let sessionMirror = SetOnce<any SocketIOSessionMirror>()

    /// - Parameter timerLoop: loop for heartbeat/ack/connect timers; nil creates a private
    ///   loop driven by `clock`.
    public init(configuration: SocketIOConfiguration, clock: any MonotonicClock = SystemClock(),
                logger: Logger = Logger(label: "touchsync.socketio"), timerLoop: EventLoop? = nil) throws {
        var config = configuration
        config.engine.maxOutboundBytesPerWebSocket = configuration.maxOutboundBytesPerSocket
        self.configuration = config
        self.logger = logger
        engine = try EngineIOServer(configuration: config.engine, clock: clock, timerLoop: timerLoop, logger: logger)
        engine.delegate = self
    }

    /// Answers Engine.IO requests (mount at `/socket.io/*`).
    public func handle(_ request: HTTPRequest) async -> HTTPResponse { await engine.handle(request) }

    /// Registers `handle(_:)` for every method on `<engine path>*` (`/socket.io/*`).
    public func mount(on router: inout RouterBuilder) { engine.mount(on: &router) }

    // MARK: registration

    public func setAuthenticator(_ f: @escaping Authenticator) { handlers.withLock { $0.authenticator = f } }
    public func onConnect(_ f: @escaping @Sendable (SocketIOSocket) -> Void) { handlers.withLock { $0.onConnect = f } }
    public func onDisconnect(_ f: @escaping @Sendable (SocketIOSocket, String) -> Void) { handlers.withLock { $0.onDisconnect = f } }

    /// Handles event `event`; binary arguments appear as placeholder objects.
    public func on(_ event: String, _ handler: @escaping EventHandler) {
        handlers.withLock { $0.events[event] = { socket, data, ack in await handler(socket, data.args, ack) } }
    }

    /// Handles event `event` with its binary attachments.
    public func on(_ event: String, withAttachments handler: @escaping EventDataHandler) {
        handlers.withLock { $0.events[event] = handler }
    }

    /// The client-to-server events with a handler, sorted (docs/api.md is checked against them).
    public var eventNames: [String] { handlers.withLock { $0.events.keys.sorted() } }

    public func setEmitObserver(_ f: @escaping @Sendable (SocketIOEmitRecord) -> Void) { handlers.withLock { $0.emitObserver = f } }

    // MARK: queries

    public func socket(id: String) -> SocketIOSocket? { hub.withLock { $0.socket(id: id) } }

    /// Every connected socket, of every namespace.
    public var connectedSockets: [SocketIOSocket] { hub.withLock { $0.adapters.values.flatMap { Array($0.sockets.values) } } }

    /// The sockets of `room` in `namespace` (rooms are per namespace).
    public func sockets(inRoom room: String, namespace: String = "/") -> [SocketIOSocket] {
        hub.withLock { $0.adapters[namespace]?.members(of: room, except: nil) ?? [] }
    }

    func rooms(ofSocket id: String, namespace: String) -> Set<String> {
        hub.withLock { $0.adapters[namespace]?.rooms(of: id) ?? [] }
    }

    public var stats: SocketIOStats {
        let (sockets, rooms, recovery) = hub.withLock { h in
            (h.adapters.values.flatMap { Array($0.sockets.values) }, h.adapters.values.reduce(0) { $0 + $1.roomCount },
             h.recovery.values.reduce(into: (kept: 0, perUser: 0, total: 0)) {
                 $0.kept += $1.sessionCount
                 $0.perUser += $1.evictedPerUser
                 $0.total += $1.evictedTotal
             })
        }
        var s = counters.current
        s.rooms = rooms
        let u = engine.unconnectedStats
        s.unconnectedSessions = u.sessions
        s.handshakesRefusedPerAddress = u.refusedPerAddress
        s.handshakesRefusedTotal = u.refusedTotal
        s.recoverySessions = recovery.kept
        s.recoverySessionsEvictedPerUser = recovery.perUser
        s.recoverySessionsEvictedTotal = recovery.total
        for socket in sockets {
            if socket.transport == .websocket { s.websocketSockets += 1 } else { s.pollingSockets += 1 }
        }
        return s
    }

    /// Closes every connection; each socket's `onDisconnect` gets `reason`.
    public func disconnectAll(reason: String) { engine.closeAll(reason: reason) }

    // MARK: rooms

    func join(socketID: String, namespace: String, room: String) {
        hub.withLock { $0.adapters[namespace]?.join(socketID, room) }
        mirrorRooms(socketID: socketID, namespace: namespace)
    }

    func leave(socketID: String, namespace: String, room: String) {
        hub.withLock { $0.adapters[namespace]?.leave(socketID, room) }
        mirrorRooms(socketID: socketID, namespace: namespace)
    }

    // MARK: emitting

    /// Encodes a packet once into the Engine.IO packets that carry it.
    static func preEncode(_ p: SocketIOPacket) -> [EnginePreEncodedPacket] {
        var out = [EnginePreEncodedPacket(messageUTF8: SocketIOPacketCodec.encode(p))]
        for a in p.attachments { out.append(EnginePreEncodedPacket(.binary(a))) }
        return out
    }

    /// With connection state recovery on: the event with a fresh offset as its last argument,
    /// encoded, and kept for sockets of `recoveryTarget` that reconnect after missing it.
    func recoverablePackets(_ event: String, _ args: [JSONValue], attachments: [[UInt8]], namespace: String,
                            recoveryTarget: SocketIORecoveryLog.Target) -> [EnginePreEncodedPacket] {
        recoverablePacketsCounted(event, args, attachments: attachments, namespace: namespace, recoveryTarget: recoveryTarget).packets
    }

    /// `recoverablePackets`, with the counter of the offset it carries.
    func recoverablePacketsCounted(_ event: String, _ args: [JSONValue], attachments: [[UInt8]], namespace: String,
                                   recoveryTarget: SocketIORecoveryLog.Target) -> (packets: [EnginePreEncodedPacket], counter: UInt64) {
        let (offset, counter) = hub.withLock { h in
            let offset = h.recovery[namespace, default: makeRecoveryLog()].makeOffset()
            return (offset, h.recovery[namespace]!.nextOffset)
        }
        let packets = Self.preEncode(SocketIOPacketCodec.event(event, args + [.string(offset)], namespace: namespace, attachments: attachments))
        let now = engine.clock.now()
        hub.withLock { $0.recovery[namespace, default: makeRecoveryLog()].append(offset: offset, target: recoveryTarget, packets: packets, now: now) }
        return (packets, counter)
    }

    func makeRecoveryLog() -> SocketIORecoveryLog {
        SocketIORecoveryLog(maxDisconnectionNanoseconds: configuration.recoveryMaxDisconnection.clockNanoseconds,
                            maxPackets: configuration.recoveryMaxBufferedPackets, maxBytes: configuration.recoveryMaxBufferedBytes,
                            maxSessionsPerUser: configuration.recoveryMaxSessionsPerUser, maxSessions: configuration.recoveryMaxSessions)
    }

    /// Disconnect reasons after which a session is kept for recovery (the reference's
    /// recoverable reasons: the transport went away, not the client or the server's decision).
    static let recoverableReasons: Set<String> = [
        EngineCloseReason.transportClose, EngineCloseReason.transportError, EngineCloseReason.pingTimeout,
        EngineCloseReason.forcedClose, EngineCloseReason.serverShutdown, EngineCloseReason.pollCancelled,
    ]

    func observe(_ record: SocketIOEmitRecord) {
        if let o = handlers.withLock({ $0.emitObserver }) { o(record) }
    }

    func countEmit(delivered: Int, dropped: Int) {
        counters.withLock {
            $0.eventsEmitted += delivered
            $0.eventsDropped += dropped
        }
    }

    // MARK: socket lifecycle

    static func newSocketID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        return String(decoding: SecureRandom.bytes(20).map { alphabet[Int($0 & 63)] }, as: UTF8.self)
    }

    func socketDidDisconnect(_ socket: SocketIOSocket, reason: String) {
        let keep = configuration.recoveryEnabled && Self.recoverableReasons.contains(reason) && socket.pid != nil
        let now = keep ? engine.clock.now() : 0
        var evicted: [String] = []
        let removed: Set<String>? = hub.withLock { h in
            guard let rooms = h.adapters[socket.namespace]?.remove(socket) else { return nil }
            h.namespaceOf[socket.id] = nil
            if h.adapters[socket.namespace]?.isEmpty == true { h.adapters[socket.namespace] = nil }
            if keep, let pid = socket.pid {
                h.recovery[socket.namespace, default: makeRecoveryLog()].persist(
                    SocketIORecoveryLog.Session(sid: socket.id, pid: pid, rooms: rooms, userID: socket.userID, data: socket.data, disconnectedAt: now))
                evicted = h.recovery[socket.namespace]?.takeEvicted() ?? []
            }
            return rooms
        }
        guard let rooms = removed else { return }
        mirrorDisconnect(socket, kept: keep, rooms: rooms)
        // Sessions the bounds dropped here are not recoverable on another node either.
        if !evicted.isEmpty, let mirror = sessionMirror.value { for pid in evicted { mirror.forget(pid: pid) } }
        if let f = handlers.withLock({ $0.onDisconnect }) { f(socket, reason) }
    }

    /// Runs one packet of a connection's mailbox.
    func process(_ work: SocketIOClient.Work, client: SocketIOClient) async {
        switch work {
        case .connect(let p): await connect(p, client: client)
        case .disconnect(let ns):
            if let s = client.socket(namespace: ns), client.remove(s) {
                socketDidDisconnect(s, reason: "client namespace disconnect")
            }
        case .event(let p):
            guard let socket = client.socket(namespace: p.namespace), let name = p.eventName else { return }
            guard let handler = handlers.withLock({ $0.events[name] }) else { return }
            let ack = p.ackID.map { SocketIOAck(socket: socket, id: $0) }
            await handler(socket, SocketIOEventData(name: name, args: p.eventArguments, attachments: p.attachments), ack)
        }
    }

    private func connect(_ p: SocketIOPacket, client: SocketIOClient) async {
        let session = client.session
        // Socket.IO v4 protocol (Engine.IO v3 clients): the namespace may carry a query string
        // (`0/custom?token=abc`), which is the auth payload; the CONNECT reply has no data; a
        // refusal is an ERROR packet whose data is the message string.
        let legacy = session.protocolVersion == 3
        var ns = p.namespace
        var authPayload = p.data
        if legacy, let q = ns.firstIndex(of: "?") {
            authPayload = .object(JSONObject(Self.queryItems(String(ns[ns.index(after: q)...])).map { ($0.0, JSONValue.string($0.1)) }))
            ns = String(ns[..<q])
        }
        func refuse(_ message: String) {
            let data: JSONValue = legacy ? .string(message) : ["message": .string(message)]
            session.sendPreEncoded(Self.preEncode(SocketIOPacket(type: .connectError, namespace: ns, data: data)))
        }
        guard configuration.namespaces.contains(ns) else { return refuse("Invalid namespace") }
        if client.socket(namespace: ns) != nil { return }
        let handshake = SocketIOHandshake(namespace: ns, request: session.handshake, auth: authPayload)
        let result: SocketIOAuthResult
        if let auth = handlers.withLock({ $0.authenticator }) {
            result = await auth(handshake, authPayload)
        } else {
            result = .accept(userID: nil, data: .null)
        }
        switch result {
        case .reject(let message):
            refuse(message)
        case .accept(let userID, let data):
            // Connection state recovery: a CONNECT with the `pid` and last `offset` of a session
            // that went away within the window, of the same user, takes that session back.
            var restored: (SocketIORecoveryLog.Session, [[EnginePreEncodedPacket]])?
            if configuration.recoveryEnabled, !legacy, let pid = authPayload?["pid"]?.stringValue, let offset = authPayload?["offset"]?.stringValue {
                let now = engine.clock.now()
                restored = hub.withLock { h in
                    guard let r = h.recovery[ns]?.restore(pid: pid, offset: offset, userID: userID, now: now),
                          h.namespaceOf[r.0.sid] == nil else { return nil }
                    return r
                }
            }
            if restored == nil, configuration.recoveryEnabled, !legacy, let pid = authPayload?["pid"]?.stringValue,
               let offset = authPayload?["offset"]?.stringValue,
               let socket = await restoreFromAnotherNode(pid: pid, offset: offset, userID: userID, data: data, handshake: handshake, client: client) {
                handlers.withLock { $0.onConnect }?(socket)
                return
            }
            let pid: String? = configuration.recoveryEnabled && !legacy ? (restored?.0.pid ?? Self.newSocketID()) : nil
            let socket = SocketIOSocket(id: restored?.0.sid ?? Self.newSocketID(), namespace: ns, userID: userID, data: data,
                                        handshake: handshake, session: session, client: client, server: self,
                                        pid: pid, recovered: restored != nil)
            guard client.add(socket) else { return }
            engine.sessionEstablished(session)
            let added: Bool = hub.withLock { h in
                if h.namespaceOf[socket.id] != nil { return false }  // that sid came back meanwhile
                h.adapters[ns, default: SocketIONamespaceAdapter(namespace: ns)].add(socket, rooms: restored?.0.rooms ?? [])
                h.namespaceOf[socket.id] = ns
                return true
            }
            guard added else {
                _ = client.remove(socket)
                return refuse("session already connected")
            }
            mirrorRooms(socketID: socket.id, namespace: ns)
            // The CONNECT reply leaves alone; the missed events and whatever the connect handler
            // emits follow once its write has completed (set-up pacing, `withPacedWrites`): a
            // client reading one frame per tick never finds the reply and the next in one read.
            let onConnect = handlers.withLock { $0.onConnect }
            var reply: JSONValue? = legacy ? nil : ["sid": .string(socket.id)]
            if let pid { reply = ["sid": .string(socket.id), "pid": .string(pid)] }
            session.withPacedWrites {
                socket.sendPacket(SocketIOPacket(type: .connect, namespace: ns, data: reply))
                // The events it missed, in order, as they first went out (offsets included).
                for packets in restored?.1 ?? [] { session.sendPreEncoded(packets) }
                onConnect?(socket)
            }
        }
    }
}

extension SocketIOServer: EngineIOServerDelegate {
    public func sessionOpened(_ session: EngineIOSession, request: HTTPRequest) {
        let client = SocketIOClient(session: session, timerLoop: engine.timerLoop, maxAttachments: configuration.maxAttachments) {
            [self] work, client in await process(work, client: client)
        }
        session.userInfo = client
        client.armConnectTimeout(nanoseconds: configuration.connectTimeout.clockNanoseconds)
        // Socket.IO v4 protocol: an Engine.IO v3 client is connected to `/` without sending a
        // CONNECT (its auth is the handshake query string).
        if session.protocolVersion == 3 { client.connectImplicitly(namespace: "/") }
    }

    /// `a=1&b=2` → pairs, percent-decoded (`+` is a space), first occurrence wins.
    static func queryItems(_ query: String) -> [(String, String)] {
        var seen: Set<String> = []
        var out: [(String, String)] = []
        for part in query.split(separator: "&") {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            let k = decode(kv[0])
            guard !k.isEmpty, seen.insert(k).inserted else { continue }
            out.append((k, kv.count > 1 ? decode(kv[1]) : ""))
        }
        return out
    }

    private func client(of session: EngineIOSession) -> SocketIOClient? {
        session.userInfo as? SocketIOClient
    }

    public func session(_ session: EngineIOSession, didReceiveText text: String) {
        guard let c = client(of: session) else { return }
        if !c.receive(text: text) { session.close(reason: EngineCloseReason.parseError) }
    }

    public func session(_ session: EngineIOSession, didReceiveBinary bytes: [UInt8]) {
        guard let c = client(of: session) else { return }
        if !c.receive(binary: bytes) { session.close(reason: EngineCloseReason.parseError) }
    }

    public func sessionClosed(_ session: EngineIOSession, reason: String) {
        guard let c = client(of: session) else { return }
        if reason == SocketIOClient.connectTimeoutReason { counters.withLock { $0.connectTimeouts += 1 } }
        let sockets = c.close()
        if reason == EngineCloseReason.slowConsumer && !sockets.isEmpty {
            // Over WebSocket the packet that overflowed the bound was handed over (and counted as
            // emitted) before the loop refused it: count it as dropped here. Over polling the queue
            // refuses it synchronously, and `emit` already counted the drop.
            let overflowed = session.transport == .websocket ? 1 : 0
            counters.withLock {
                $0.slowConsumersDisconnected += 1
                $0.eventsDropped += overflowed
            }
        }
        for s in sockets { socketDidDisconnect(s, reason: reason) }
        session.userInfo = nil
    }
}
