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
    /// Longest request line; longer → 414 (RFC 9112 §3).
    public var maxRequestLineBytes: Int = 8 * 1024
    /// Largest header section in bytes; larger → 431 (RFC 6585 §5).
    public var maxHeaderBytes: Int = 16 * 1024
    /// Most header fields; more → 431.
    public var maxHeaderCount: Int = 100
    /// Largest request body; larger → 413.
    public var maxBodyBytes: Int = 1024 * 1024
    /// Time allowed from the first byte of a request head to its end; then the connection is closed
    /// (slowloris defence).
    public var headerReadTimeout: UInt64 = 10_000_000_000
    /// Time a kept-alive connection may sit with no request (or a body may make no progress);
    /// then it is closed.
    public var idleTimeout: UInt64 = 60_000_000_000
    /// How often each connection's timeouts are evaluated.
    public var timeoutCheckInterval: UInt64 = 1_000_000_000
    /// Open connections above which new ones get a canned 503 and are closed.
    public var maxConnections: Int = 10_000
    /// On `shutdown()`, how long in-flight requests may take before every connection is closed.
    public var shutdownGracePeriod: UInt64 = 10_000_000_000
    /// Pending outbound bytes per connection before it is closed as a slow consumer.
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
