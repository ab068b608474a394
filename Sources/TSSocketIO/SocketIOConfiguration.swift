import TSEngineIO

/// Settings of a Socket.IO v5 server.
public struct SocketIOConfiguration: Sendable {
    /// The Engine.IO layer (ping interval/timeout, maxPayload, path, CORS, polling buffer bound).
    public var engine: EngineIOConfiguration
    /// Namespaces clients may connect to; another gets CONNECT_ERROR "Invalid namespace".
    public var namespaces: Set<String> = ["/"]
    /// Time an Engine.IO session may stay without any namespace connected (then it is closed,
    /// as the reference server's `connectTimeout`). 10 s where the reference waits 45 s: a real
    /// client (socket.io-client, Socket.IO-Client-Swift, python-socketio) sends its CONNECT as
    /// soon as it reads the open packet, so an honest session needs one round trip plus the
    /// authentication; 10 s covers several round trips of a slow mobile link, and the same bound
    /// as the upgrade and TLS handshake deadlines, while a client that never sends CONNECT holds
    /// its slot (`EngineIOConfiguration.maxUnconnectedSessions*`) for a quarter of the time.
    public var connectTimeout: Duration = .seconds(10)
    /// Default time `emitWithAck` waits for the client's ACK.
    public var ackTimeout: Duration = .seconds(10)
    /// Backlog a websocket socket may have queued behind the message being sent (one message
    /// of any size is exempt) before it is disconnected as a slow consumer (sets
    /// `Connection.maxOutboundBytes`). Default 1 MiB.
    public var maxOutboundBytesPerSocket: Int = 1 << 20 {
        didSet { engine.maxOutboundBytesPerWebSocket = maxOutboundBytesPerSocket }
    }
    /// Most binary attachments one packet may announce (`N-`); more closes the connection.
    public var maxAttachments: Int = 10
    /// Connection state recovery (Socket.IO v5, socket.io 4.6+ `connectionStateRecovery`): how
    /// long a disconnected socket's id, rooms and missed room events are kept for a reconnect
    /// with its `pid` and last `offset`; 0 turns recovery off (the default).
    public var recoveryMaxDisconnection: Duration = .zero
    /// Room events kept for recovery, oldest dropped first; a client that missed more gets a
    /// fresh session.
    public var recoveryMaxBufferedPackets: Int = 10_000
    /// Encoded bytes of the kept events at most (oldest dropped first).
    public var recoveryMaxBufferedBytes: Int = 16 << 20
    /// Disconnected sessions kept for recovery per user and namespace (the oldest of that user's
    /// is dropped past it; sockets without a user share one allowance); 0: no bound.
    public var recoveryMaxSessionsPerUser: Int = 32
    /// Disconnected sessions kept for recovery per namespace (the oldest dropped past it); 0: no bound.
    public var recoveryMaxSessions: Int = 10_000

    var recoveryEnabled: Bool { recoveryMaxDisconnection > .zero }

    public init(engine: EngineIOConfiguration = EngineIOConfiguration(), namespaces: Set<String> = ["/"],
                connectTimeout: Duration = .seconds(10), ackTimeout: Duration = .seconds(10), maxOutboundBytesPerSocket: Int = 1 << 20) {
        self.engine = engine
        self.namespaces = namespaces
        self.connectTimeout = connectTimeout
        self.ackTimeout = ackTimeout
        self.maxOutboundBytesPerSocket = maxOutboundBytesPerSocket
        self.engine.maxOutboundBytesPerWebSocket = maxOutboundBytesPerSocket
    }
}
