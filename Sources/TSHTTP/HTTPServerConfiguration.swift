import TSSockets

/// Every limit and timeout of `HTTPServer`, with defaults.
public struct HTTPServerConfiguration: Sendable {
    /// Address to bind ("127.0.0.1", "0.0.0.0", "::1", ...).
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks an ephemeral port (returned by `start()`).
    public var port: Int = 3000
    /// Event loop threads (default: active cores).
    public var eventLoops: Int = EventLoopGroup.activeProcessorCount
    /// Readiness backend of the event loops (`auto`: epoll on Linux, kqueue on Darwin, unless
    /// `TOUCHSYNC_SERVER_POLLER` names another).
    public var poller: PollerKind = .auto
    /// Whether the event loops flush several connections at once through io_uring (`auto`: on
    /// Linux when the kernel allows it, unless `TOUCHSYNC_SERVER_IO_URING=off`; setting `server.ioUring`).
    public var ioUring: IORingMode = .auto
    /// Longest request line; longer → 414 (RFC 9112 §3).
    public var maxRequestLineBytes: Int = 8 * 1024
    /// Largest header section in bytes; larger → 431 (RFC 6585 §5).
    public var maxHeaderBytes: Int = 16 * 1024
    /// Most header fields; more → 431.
    public var maxHeaderCount: Int = 100
    /// Largest request body; larger → 413.
    public var maxBodyBytes: Int = 1024 * 1024
    /// Deepest nesting of arrays/objects `HTTPRequest.jsonBody()` parses; deeper → 400.
    public var maxJSONDepth: Int = HTTPRequest.defaultMaxJSONDepth
    /// Time allowed from the first byte of a request head to its end; then the connection is closed
    /// (slowloris defence).
    public var headerReadTimeout: Duration = .seconds(10)
    /// Time a kept-alive connection may sit with no request; then it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// Total time allowed from the end of a request head to the end of its body (not reset by
    /// trickled bytes); past it the request gets 408 and the connection is closed.
    public var bodyReadTimeout: Duration = .seconds(30)
    /// With response bytes pending, the longest the client may take none of them before it is
    /// dropped as a slow consumer (also applies to upgraded WebSocket connections).
    public var outboundStallTimeout: Duration = .seconds(30)
    /// The slowest overall rate at which a client must take pending bytes: pending bytes must
    /// be gone within `outboundStallTimeout` + bytes / rate (a total deadline; 0 turns it off).
    public var minOutboundBytesPerSecond: Int = 16 * 1024
    /// Open connections from one client address (IP) above which new ones from it are refused
    /// (503 and close) while other addresses are still served. 0 turns the cap off.
    public var maxConnectionsPerAddress: Int = 256
    /// How often each connection's timeouts are evaluated.
    public var timeoutCheckInterval: Duration = .seconds(1)
    /// Open connections above which new ones get a canned 503 and are closed.
    public var maxConnections: Int = 10_000
    /// On `shutdown()`, how long in-flight requests may take before every connection is closed.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// Outbound backlog per connection (bytes queued behind the response being sent; one
    /// response of any size may exceed it) before it is closed as a slow consumer.
    public var maxOutboundBytesPerConnection: Int = 4 * 1024 * 1024
    /// Run request handlers on the event loop that read the request (a task executor preference,
    /// `EventLoopTaskExecutor`) instead of the global concurrency pool: no thread hop per request,
    /// and a handler that never suspends finishes within the loop iteration. Handlers must then
    /// not block for long (they delay the other connections of their loop). Default on.
    public var handlersOnEventLoop: Bool = true
    /// listen(2) backlog.
    public var listenBacklog: Int32 = 1024
    /// Clock for timeouts and durations.
    public var clock: any MonotonicClock = SystemClock()
    /// tls hook: the transform (TLS) of each accepted connection; nil serves plain HTTP.
    public var connectionTransform: ConnectionTransformFactory?

    public init() {}

    public init(host: String = "127.0.0.1", port: Int = 3000, eventLoops: Int = EventLoopGroup.activeProcessorCount,
                clock: any MonotonicClock = SystemClock()) {
        self.host = host
        self.port = port
        self.eventLoops = eventLoops
        self.clock = clock
    }

    /// The parser limits derived from this configuration.
    public var parserLimits: HTTPParserLimits {
        HTTPParserLimits(maxRequestLineBytes: maxRequestLineBytes, maxHeaderBytes: maxHeaderBytes,
                         maxHeaderCount: maxHeaderCount, maxBodyBytes: maxBodyBytes)
    }
}
