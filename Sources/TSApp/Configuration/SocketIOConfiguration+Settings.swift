import TSDomain
import TSEngineIO
import TSHTTP
import TSRealtime
import TSRoutes
import TSSocketIO

/// The realtime settings (`realtime.*` but Redis's): Engine.IO's transport, Socket.IO's recovery
/// and back-pressure, who receives which domain events, and the event log.
extension SettingKeys {
    public static let realtimeGlobalEvents = SettingKey<String>("realtime.globalEvents", "members", help: "Who gets *:global events: members (of the room) or all (every socket).")
    public static let realtimeLegacyJoinEvents = SettingKey<Bool>("realtime.legacyJoinEvents", false, help: "Also send one element:created per element on room:join (old clients).")
    public static let realtimePingInterval = SettingKey<Duration>("realtime.pingInterval", "25s", integerForm: .init("realtime.pingIntervalMs", unit: .milliseconds(1)),
            help: "Engine.IO pingInterval.")
    public static let realtimePingTimeout = SettingKey<Duration>("realtime.pingTimeout", "20s", integerForm: .init("realtime.pingTimeoutMs", unit: .milliseconds(1)),
            help: "Engine.IO pingTimeout.")
    public static let realtimeMaxPayload = SettingKey<Int>("realtime.maxPayload", 1_000_000, help: "Engine.IO maxPayload (bytes per polling request / message).")
    public static let realtimeMaxOutboundBytesPerSocket = SettingKey<Int>("realtime.maxOutboundBytesPerSocket", 1_048_576, help: "Unsent bytes a socket may queue behind the message being sent (one message of any size, e.g. a room's elements:batch, is exempt); past it the slow consumer is disconnected.")
    public static let realtimeCorsAllowedOrigins = SettingKey<[String]>("realtime.corsAllowedOrigins", ["*"], help: "Origins allowed on polling requests (CORS); [\"*\"] allows any.")
    public static let realtimeAllowedOrigins = SettingKey<[String]?>("realtime.allowedOrigins", nil, help: "Origins allowed to open a WebSocket; null allows any.")
    public static let realtimeEventLogCapacity = SettingKey<Int>("realtime.eventLogCapacity", 10_000,
            help: "Emitted realtime events kept in memory for GET /api/test/events (test mode) and the inspector; older ones are evicted.")
    public static let realtimeEventLogMaxBytes = SettingKey<Int>("realtime.eventLogMaxBytes", 16_777_216,
            help: "Approximate payload bytes the event log keeps at most (oldest evicted; one payload over a quarter of it is stored truncated).")
    public static let realtimeFaultMaxBufferedBytes = SettingKey<Int>("realtime.faultMaxBufferedBytes", 1_048_576,
            help: "Test mode: bytes of Socket.IO packets one socket may have held or delayed by POST /api/test/faults (hold, delay); past it the socket is dropped as a slow consumer (docs/test-mode.md).")
    // Socket.IO compatibility: EIO3 and connection state recovery.
    public static let realtimeAllowEIO3 = SettingKey<Bool>("realtime.allowEIO3", false,
            help: "Also accept Engine.IO v3 / Socket.IO v4 protocol clients (EIO=3: socket.io 2.x, Socket.IO-Client-Swift 15 and earlier, python-socketio 4.x); off as in the reference server.")
    public static let realtimeConnectionStateRecoveryMaxDisconnectionDuration = SettingKey<Duration>("realtime.connectionStateRecovery.maxDisconnectionDuration", "0s", integerForm: .init("realtime.connectionStateRecovery.maxDisconnectionDuration", unit: .milliseconds(1)),
            help: "Connection state recovery (socket.io 4.6+): how long a disconnected socket's id, rooms and missed room events are kept for it to reconnect with; 0 turns recovery off.")
    public static let realtimeConnectionStateRecoveryMaxBufferedPackets = SettingKey<Int>("realtime.connectionStateRecovery.maxBufferedPackets", 10_000,
            help: "Room events kept for recovery (oldest dropped first); a client that missed more than this gets a fresh session.")
    public static let realtimeConnectionStateRecoveryMaxBufferedBytes = SettingKey<Int>("realtime.connectionStateRecovery.maxBufferedBytes", 16_777_216,
            help: "Encoded bytes of the events kept for recovery at most (oldest dropped first).")
    public static let realtimeConnectionStateRecoveryMaxSessionsPerUser = SettingKey<Int>("realtime.connectionStateRecovery.maxSessionsPerUser", 32,
            help: "Disconnected sessions kept for recovery per user (the user's oldest is dropped past it, and that client gets a fresh session); 0: no bound.")
    public static let realtimeConnectionStateRecoveryMaxSessions = SettingKey<Int>("realtime.connectionStateRecovery.maxSessions", 10_000,
            help: "Disconnected sessions kept for recovery in all (the oldest dropped past it); 0: no bound.")
    // Sessions before their Socket.IO CONNECT (nothing is known about them but their address).
    public static let realtimeConnectTimeout = SettingKey<Duration>("realtime.connectTimeout", "10s",
            help: "How long an Engine.IO session may stay without a Socket.IO CONNECT before it is closed (the reference's connectTimeout, 45 s there; real clients send CONNECT right after the handshake).")
    public static let realtimeMaxUnconnectedSessions = SettingKey<Int>("realtime.maxUnconnectedSessions", 10_000,
            help: "Engine.IO sessions without a Socket.IO CONNECT, server-wide; past it a handshake gets 503 {\"code\":4,…}; 0: no bound.")
    public static let realtimeMaxUnconnectedSessionsPerAddress = SettingKey<Int>("realtime.maxUnconnectedSessionsPerAddress", 256,
            help: "Engine.IO sessions without a Socket.IO CONNECT per client address (behind a proxy: the address server.trustedProxies names); past it a handshake from that address gets 403 {\"code\":4,…}; 0: no bound.")
    // Several nodes: one room's events in commit order (docs/realtime-cluster.md, "Order across nodes").
    public static let realtimeGapWait = SettingKey<Duration>("realtime.gapWait", "500ms",
            help: "How long a room's delivery waits for a missing event number before giving it up (and, with realtime.redisUrl, how long a room's first event waits for earlier ones still on their way from another node).")

    /// The `realtime.*` keys but Redis's, in documentation order.
    static let realtimeKeys: [SettingKeys] = [
        .realtimeGlobalEvents, .realtimeLegacyJoinEvents, .realtimePingInterval, .realtimePingTimeout, .realtimeMaxPayload,
        .realtimeMaxOutboundBytesPerSocket, .realtimeCorsAllowedOrigins, .realtimeAllowedOrigins, .realtimeEventLogCapacity,
        .realtimeEventLogMaxBytes, .realtimeFaultMaxBufferedBytes, .realtimeAllowEIO3,
        .realtimeConnectionStateRecoveryMaxDisconnectionDuration, .realtimeConnectionStateRecoveryMaxBufferedPackets,
        .realtimeConnectionStateRecoveryMaxBufferedBytes, .realtimeConnectionStateRecoveryMaxSessionsPerUser,
        .realtimeConnectionStateRecoveryMaxSessions, .realtimeConnectTimeout, .realtimeMaxUnconnectedSessions,
        .realtimeMaxUnconnectedSessionsPerAddress, .realtimeGapWait,
    ]
}

extension EngineIOConfiguration {
    init(reader: AppConfiguration) {
        self.init()
        pingInterval = reader[.realtimePingInterval]
        pingTimeout = reader[.realtimePingTimeout]
        maxPayload = reader[.realtimeMaxPayload]
        allowedOrigins = reader[.realtimeCorsAllowedOrigins]
        webSocketAllowedOrigins = reader[.realtimeAllowedOrigins]
        frameReadTimeout = HTTPServerConfiguration.bodyReadTimeout(reader)
        allowEIO3 = reader[.realtimeAllowEIO3]
        maxUnconnectedSessions = max(0, reader[.realtimeMaxUnconnectedSessions])
        maxUnconnectedSessionsPerAddress = max(0, reader[.realtimeMaxUnconnectedSessionsPerAddress])
        // Behind a trusted proxy each client counts under its own address, not the proxy's (an
        // invalid server.trustedProxies stops the start where the REST routes read it).
        let proxies = (try? TrustedProxies(reader: reader)) ?? .none
        clientAddress = { proxies.clientAddress(of: $0) }
    }
}

extension SocketIOConfiguration {
    init(reader: AppConfiguration) {
        self.init(engine: EngineIOConfiguration(reader: reader))
        recoveryMaxDisconnection = reader[.realtimeConnectionStateRecoveryMaxDisconnectionDuration]
        recoveryMaxBufferedPackets = reader[.realtimeConnectionStateRecoveryMaxBufferedPackets]
        recoveryMaxBufferedBytes = reader[.realtimeConnectionStateRecoveryMaxBufferedBytes]
        recoveryMaxSessionsPerUser = max(0, reader[.realtimeConnectionStateRecoveryMaxSessionsPerUser])
        recoveryMaxSessions = max(0, reader[.realtimeConnectionStateRecoveryMaxSessions])
        connectTimeout = max(.milliseconds(100), reader[.realtimeConnectTimeout])
        maxOutboundBytesPerSocket = reader[.realtimeMaxOutboundBytesPerSocket]
        engine.maxBufferedPacketsBytes = maxOutboundBytesPerSocket  // the same backlog bound over polling
    }
}

extension RealtimeConfiguration {
    init(reader: AppConfiguration) throws {
        self.init()
        guard let global = GlobalEvents(rawValue: reader[.realtimeGlobalEvents]) else {
            throw ConfigurationError("realtime.globalEvents must be members or all")
        }
        globalEvents = global
        legacyJoinEvents = reader[.realtimeLegacyJoinEvents]
        let gap = reader[.realtimeGapWait]
        guard gap >= .zero, gap <= .seconds(60) else { throw ConfigurationError("realtime.gapWait must be between 0s and 60s") }
        gapWait = gap
        // Several nodes: a room's first event may overtake earlier ones still on their way (RoomEventSequencer).
        holdFreshRooms = !(reader[.realtimeRedisUrl] ?? "").isEmpty
    }
}

extension RealtimeEventLog {
    /// The log `realtime.eventLogCapacity` and `realtime.eventLogMaxBytes` bound.
    convenience init(reader: AppConfiguration, clock: any WallClock) {
        self.init(capacity: reader[.realtimeEventLogCapacity], maxBytes: reader[.realtimeEventLogMaxBytes], clock: clock)
    }
}
