import Logging
import TSSockets

/// An HTTP/1.1 server (RFC 9112) on TSSockets.
///
/// Per connection: keep-alive, pipelining (one response at a time, in request order),
/// `Expect: 100-continue`, HEAD, header-read and idle timeouts, an access log line per request.
/// Handlers run as `Task`s — by default preferring the connection's event loop as their executor
/// (`handlersOnEventLoop`), so a handler that does not suspend runs inline on the loop thread;
/// responses are written back on the connection's loop, head and body in one send.
// @unchecked Sendable: `group`, `listener`, `registries` and `ownsGroup` are written in `start()`
// before any connection exists and under `lifecycle`'s lock; they are only read afterwards.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: HTTPServerConfiguration
    let context: HTTPServerContext
    private var group: EventLoopGroup?
    private var ownsGroup = false
    private var listener: TCPListener?
    private var registries: [HTTPLoopRegistry] = []
    private enum Lifecycle { case idle, running, shuttingDown, stopped }
    private let lifecycle = LockedValue(Lifecycle.idle)

    /// `group`: run on an existing event loop group instead of creating one of
    /// `configuration.eventLoops` threads (the server then does not shut it down).
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger,
                observer: (any HTTPServerObserver)? = nil, group: EventLoopGroup? = nil) {
        self.configuration = configuration
        self.context = HTTPServerContext(configuration: configuration, responder: responder, logger: logger, observer: observer)
        self.group = group
    }

    /// Open TCP connections (including upgraded ones until they close).
    public var openConnections: Int { listener?.connectionCount ?? 0 }

    /// The bound port (after `start()`).
    public var port: Int { listener?.boundPort ?? 0 }

    /// The event loops serving this server (after `start()`).
    public var eventLoopGroup: EventLoopGroup? { group }

    /// Binds and starts serving. Returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        try lifecycle.withLock { state in
            guard state == .idle else { throw HTTPError(status: 500, message: "server already started") }
            let group: EventLoopGroup
            if let g = self.group {
                group = g
            } else {
                group = try EventLoopGroup(count: configuration.eventLoops, logger: context.logger, poller: configuration.poller)
                self.group = group
                ownsGroup = true
            }
            let registries = group.loops.map { HTTPLoopRegistry(loop: $0) }
            self.registries = registries
            let context = self.context
            let listener = TCPListener(
                host: configuration.host, port: configuration.port, group: group,
                maxConnections: configuration.maxConnections,
                maxOutboundBytes: configuration.maxOutboundBytesPerConnection,
                backlog: configuration.listenBacklog, logger: context.logger,
                rejectResponse: { HTTPServer.cannedServiceUnavailable() },
                makeHandler: { connection in
                    let handler = HTTPConnectionHandler(connection: connection, context: context,
                                                        registry: registries[connection.loop.index])
                    handler.start()
                    return handler
                })
            do {
                _ = try listener.start()
            } catch {
                if ownsGroup { group.shutdown(); self.group = nil; ownsGroup = false }
                throw error
            }
            self.listener = listener
            state = .running
        }
        context.logger.info("HTTP server listening", metadata: ["host": .string(configuration.host), "port": .stringConvertible(port)])
        return port
    }

    /// Graceful shutdown (SIGTERM): stop accepting; idle connections close; new requests on
    /// kept-alive connections get 503 + close; in-flight requests finish (their responses carry
    /// `Connection: close`) within `shutdownGracePeriod`; then every connection is closed and the
    /// event loops stop (when owned).
    public func shutdown() async {
        let proceed: Bool = lifecycle.withLock { state in
            guard state == .running else { return false }
            state = .shuttingDown
            return true
        }
        guard proceed, let listener, let group else { return }
        listener.stop()
        for registry in registries {
            registry.loop.execute { registry.beginDraining() }
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .nanoseconds(Int64(clamping: configuration.shutdownGracePeriod)))
        while listener.connectionCount > 0 && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Force-close whatever is left.
        for registry in registries {
            registry.loop.execute { registry.closeAll() }
        }
        let forceDeadline = clock.now.advanced(by: .seconds(1))
        while listener.connectionCount > 0 && clock.now < forceDeadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if ownsGroup {
            await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
                // EventLoopGroup.shutdown blocks; keep it off the cooperative pool.
                let thread = BlockingThread { group.shutdown(); cont.resume() }
                thread.start()
            }
        }
        lifecycle.withLock { $0 = .stopped }
        context.logger.info("HTTP server stopped")
    }

    /// `503` written to connections over `maxConnections` before they are closed.
    static func cannedServiceUnavailable() -> [UInt8] {
        var encoder = HTTPResponseEncoder()
        var response = HTTPError.serviceUnavailable("Too many connections", retryAfterSeconds: 1).response(for: nil)
        response.headers.add("Connection", "close")
        encoder.encode(response, requestID: RequestID.generate(), keepAlive: false, http10: false, omitBody: false)
        return encoder.buffer
    }
}

/// Immutable state shared by every connection of a server.
final class HTTPServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let logger: Logger
    let observer: (any HTTPServerObserver)?
    let limits: HTTPParserLimits

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger, observer: (any HTTPServerObserver)?) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        self.observer = observer
        self.limits = configuration.parserLimits
    }
}

/// Per-loop bookkeeping of a server's connections.
// @unchecked Sendable: all state is only touched on `loop` (every access is inside `loop.execute`
// or a ConnectionHandler callback, which run on the loop).
final class HTTPLoopRegistry: @unchecked Sendable {
    let loop: EventLoop
    /// Runs request handlers on `loop` (when `HTTPServerConfiguration.handlersOnEventLoop`).
    let executor: EventLoopTaskExecutor
    var handlers: [UInt64: HTTPConnectionHandler] = [:]
    /// Upgraded connections still open (removed by their `whenClosed` callback).
    var upgraded: [UInt64: Connection] = [:]
    var draining = false

    init(loop: EventLoop) {
        self.loop = loop
        self.executor = EventLoopTaskExecutor(loop: loop)
    }

    func beginDraining() {
        draining = true
        for handler in Array(handlers.values) { handler.drain() }
    }

    func closeAll() {
        for handler in Array(handlers.values) { handler.connection.close(.serverShutdown) }
        for connection in Array(upgraded.values) { connection.close(.serverShutdown) }
        upgraded.removeAll()
    }

    func addUpgraded(_ connection: Connection) {
        upgraded[connection.id] = connection
        connection.whenClosed { [self] c in upgraded[c.id] = nil }
    }
}

/// A plain thread for blocking work.
final class BlockingThread: Sendable {
    private let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func start() {
        _ = Platform.spawnDetachedThread(body)
    }
}
