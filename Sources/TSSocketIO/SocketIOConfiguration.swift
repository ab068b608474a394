import TSEngineIO

/// Settings of a Socket.IO v5 server.
public struct SocketIOConfiguration: Sendable {
    /// The Engine.IO layer (ping interval/timeout, maxPayload, path, CORS, polling buffer bound).
    public var engine: EngineIOConfiguration
    /// Namespaces clients may connect to; another gets CONNECT_ERROR "Invalid namespace".
    public var namespaces: Set<String> = ["/"]
    /// Time an Engine.IO session may stay without any namespace connected (then it is closed,
    /// as the reference server's `connectTimeout`).
    public var connectTimeout: Duration = .seconds(45)
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

    var recoveryEnabled: Bool { recoveryMaxDisconnection > .zero }

    public init(engine: EngineIOConfiguration = EngineIOConfiguration(), namespaces: Set<String> = ["/"],
                connectTimeout: Duration = .seconds(45), ackTimeout: Duration = .seconds(10), maxOutboundBytesPerSocket: Int = 1 << 20) {
        self.engine = engine
        self.namespaces = namespaces
        self.connectTimeout = connectTimeout
        self.ackTimeout = ackTimeout
        self.maxOutboundBytesPerSocket = maxOutboundBytesPerSocket
        self.engine.maxOutboundBytesPerWebSocket = maxOutboundBytesPerSocket
    }
}
