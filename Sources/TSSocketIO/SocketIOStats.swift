import TSJSON

/// Counters of a `SocketIOServer`.
public struct SocketIOStats: Sendable, Equatable {
    /// Connected namespace sockets on each transport.
    public var pollingSockets = 0
    public var websocketSockets = 0
    /// Rooms with at least one member (the per-socket sid rooms included).
    public var rooms = 0
    /// Packets handed to a socket's transport (one per recipient).
    public var eventsEmitted = 0
    /// Packets not delivered because the recipient was closed or overflowed (for a WebSocket slow
    /// consumer, the packet that passed its bound; its unsent backlog dies with the connection).
    public var eventsDropped = 0
    /// Sockets disconnected because their outbound bound was passed.
    public var slowConsumersDisconnected = 0
    /// Engine.IO sessions without a Socket.IO CONNECT yet.
    public var unconnectedSessions = 0
    /// Handshakes refused past `maxUnconnectedSessionsPerAddress` and past `maxUnconnectedSessions`.
    public var handshakesRefusedPerAddress = 0
    public var handshakesRefusedTotal = 0
    /// Sessions closed because no CONNECT came within `connectTimeout`.
    public var connectTimeouts = 0
    /// Disconnected sessions kept for connection state recovery (every namespace).
    public var recoverySessions = 0
    /// Kept sessions dropped before their window ended, by the per-user and the total bound.
    public var recoverySessionsEvictedPerUser = 0
    public var recoverySessionsEvictedTotal = 0

    public var sockets: Int { pollingSockets + websocketSockets }
}

/// Whom an emit addressed.
public enum SocketIOEmitTarget: Sendable, Equatable {
    case room(String)
    case socket(String)
}

/// One server emit, for observers (a test endpoint, metrics).
public struct SocketIOEmitRecord: Sendable {
    public let event: String
    public let args: [JSONValue]
    public let target: SocketIOEmitTarget
    public let except: String?
    public let recipients: Int

    public init(event: String, args: [JSONValue], target: SocketIOEmitTarget, except: String?, recipients: Int) {
        self.event = event
        self.args = args
        self.target = target
        self.except = except
        self.recipients = recipients
    }
}
