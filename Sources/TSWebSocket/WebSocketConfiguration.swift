// Limits and policy for WebSocket connections (RFC 6455 §10.4: implementations SHOULD limit
// frame and message sizes; §10.2: origin checks).

/// Settings for the handshake and for every upgraded connection. All limits are checked before
/// the bytes they govern are allocated.
public struct WebSocketConfiguration: Sendable {
    /// Largest payload of a single frame, in bytes. The decoder rejects a frame whose length
    /// field exceeds this (close 1009) before buffering any of its payload. Default 1 MiB
    /// (1_048_576): an Engine.IO packet of `maxPayload` 1_000_000 plus its type prefix fits in
    /// one frame with room to spare.
    public var maxFrameSize: Int

    /// Largest reassembled message (sum of a fragmented message's frames), in bytes; over it →
    /// close 1009. Default 1 MiB (1_048_576): Engine.IO/Socket.IO's `maxPayload` is 1_000_000
    /// bytes of payload; the extra ~48 KiB leaves room for packet-type prefixes and framing
    /// overhead so a maximal legal Socket.IO packet is never refused here (Engine.IO enforces
    /// its own exact limit above this layer).
    public var maxMessageSize: Int

    /// After sending a Close frame, how long to wait for the peer's Close before dropping the
    /// TCP connection (RFC 6455 §7.1.1, §7.1.3). Default 5 s.
    public var closeTimeout: Duration

    /// Total time one frame may take to arrive, from its first byte to its last (not reset by
    /// trickled bytes); past it the connection is failed with Close 1008 and dropped. Default 30 s.
    public var frameReadTimeout: Duration = .seconds(30)

    /// Allowed `Origin` header values (exact ASCII serialisations such as
    /// "https://app.example.com", compared case-insensitively). `nil` allows any origin. A request
    /// that sends no `Origin` (a non-browser client, RFC 6455 §4.1/§10.2) is not refused by the
    /// list: the check exists to stop browsers from other sites, which always send `Origin`.
    public var allowedOrigins: [String]?

    public init(
        maxFrameSize: Int = 1_048_576,
        maxMessageSize: Int = 1_048_576,
        closeTimeout: Duration = .seconds(5),
        allowedOrigins: [String]? = nil
    ) {
        self.maxFrameSize = max(125, maxFrameSize)
        self.maxMessageSize = maxMessageSize
        self.closeTimeout = closeTimeout
        self.allowedOrigins = allowedOrigins
    }

    public static let `default` = WebSocketConfiguration()

    /// `closeTimeout` in nanoseconds (for `EventLoop.scheduleTask(in:)`).
    var closeTimeoutNanoseconds: UInt64 { Self.nanoseconds(closeTimeout) }

    /// `frameReadTimeout` in nanoseconds.
    var frameReadTimeoutNanoseconds: UInt64 { Self.nanoseconds(frameReadTimeout) }

    static func nanoseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
