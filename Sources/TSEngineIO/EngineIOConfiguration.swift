import TSHTTP

/// Settings of an Engine.IO v4 server. Every limit is checked before the data it bounds is
/// buffered.
public struct EngineIOConfiguration: Sendable {
    /// Interval between server pings (Engine.IO v4 "Heartbeat"; sent in the open packet in ms).
    public var pingInterval: Duration = .seconds(25)
    /// Time to wait for a pong after a ping before closing the session (sent in ms too).
    public var pingTimeout: Duration = .seconds(20)
    /// Largest POST payload / WebSocket message accepted, bytes (sent in the open packet).
    /// A larger polling POST is answered 413 and closes the session.
    public var maxPayload: Int = 1_000_000
    /// Time allowed between the upgrade probe and the client's `5`.
    public var upgradeTimeout: Duration = .seconds(10)
    /// Backlog a polling session may hold for its next GET besides its largest packet (one
    /// packet of any size waits whole); past it the session is closed as a slow consumer.
    public var maxBufferedPacketsBytes: Int = 1 << 20
    /// Backlog a WebSocket may have queued behind the frame being sent (one frame of any size
    /// may wait too) before it is closed as a slow consumer (sets `Connection.maxOutboundBytes`,
    /// see `ConnectionOutboundQueue`). Default 1 MiB.
    public var maxOutboundBytesPerWebSocket: Int = 1 << 20
    /// Total time one WebSocket frame may take to arrive (from its first byte); past it the
    /// connection is closed with 1008 (`WebSocketConfiguration.frameReadTimeout`).
    public var frameReadTimeout: Duration = .seconds(30)
    /// Origins allowed by CORS on polling responses. `["*"]` reflects any origin (with
    /// credentials); empty sends no CORS headers.
    public var allowedOrigins: [String] = ["*"]
    /// Origins allowed to open the WebSocket transport (RFC 6455 §4.2.1 / §10.2: 403 otherwise);
    /// nil allows any, and a request without `Origin` (a native client) is always allowed.
    public var webSocketAllowedOrigins: [String]? = nil
    /// Mount path, with leading and trailing slash (`/socket.io/`).
    public var path: String = "/socket.io/"
    /// Allow the `websocket` transport (and the upgrade to it).
    public var allowWebSocket: Bool = true
    /// Allow the `polling` transport.
    public var allowPolling: Bool = true
    /// Accept Engine.IO v3 clients (`EIO=3`: socket.io 2.x, Socket.IO-Client-Swift ≤ 15,
    /// python-engineio 3.x). Off by default, as in the reference server (`allowEIO3`); when
    /// off, `EIO=3` is answered 400 "Unsupported protocol version".
    public var allowEIO3: Bool = false
    /// Sessions the layer above has not taken yet (Socket.IO: no namespace CONNECT so far;
    /// `EngineIOServer.sessionEstablished`), server-wide; past it a handshake is answered 503
    /// with the reference's error body (`EngineHTTPError.tooManyUnconnectedSessions`). 0: no
    /// bound (an Engine.IO server alone, whose sessions are never "established").
    public var maxUnconnectedSessions: Int = 0
    /// The same per client address (`clientAddress`); past it a handshake from that address is
    /// answered 403 (the reference's `allowRequest` refusal), others are still served. 0: no bound.
    public var maxUnconnectedSessionsPerAddress: Int = 0
    /// The address a handshake is counted under (e.g. the client a trusted proxy names in
    /// `X-Forwarded-For`); nil: the TCP peer's IP.
    public var clientAddress: (@Sendable (HTTPRequest) -> String)? = nil
    /// Connection set-up pacing over WebSocket (`EngineSetupPacing`), for test suites whose
    /// client handles one read per tick; nil (the default) writes set-up packets as they come.
    public var setupPacing: EngineSetupPacing? = nil

    public init() {}

    public init(pingInterval: Duration = .seconds(25), pingTimeout: Duration = .seconds(20), maxPayload: Int = 1_000_000,
                upgradeTimeout: Duration = .seconds(10), maxBufferedPacketsBytes: Int = 1 << 20,
                allowedOrigins: [String] = ["*"], path: String = "/socket.io/") {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.maxPayload = maxPayload
        self.upgradeTimeout = upgradeTimeout
        self.maxBufferedPacketsBytes = maxBufferedPacketsBytes
        self.allowedOrigins = allowedOrigins
        self.path = path
    }
}
