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
    /// Connections that may still send something (see `HTTPOutputTracker`).
    let tracker = HTTPOutputTracker()

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
                group = try EventLoopGroup(count: configuration.eventLoops, logger: context.logger, poller: configuration.poller,
                                           ioUring: configuration.ioUring)
                self.group = group
                ownsGroup = true
            }
            let registries = group.loops.map { HTTPLoopRegistry(loop: $0) }
            self.registries = registries
            let context = self.context
            let tracker = self.tracker
            let listener = TCPListener(
                host: configuration.host, port: configuration.port, group: group,
                maxConnections: configuration.maxConnections,
                maxOutboundBytes: configuration.maxOutboundBytesPerConnection,
                backlog: configuration.listenBacklog, logger: context.logger,
                rejectResponse: { HTTPServer.cannedServiceUnavailable() },
                makeHandler: { connection in
                    tracker.opened()
                    connection.whenOutputFinished { _ in tracker.finished() }
                    let handler = HTTPConnectionHandler(connection: connection, context: context,
                                                        registry: registries[connection.loop.index])
                    handler.start()
                    return handler
                })
            listener.makeTransform = configuration.connectionTransform  // tls hook (HTTPS)
            if configuration.maxConnectionsPerAddress > 0 {
                listener.addressCap = ConnectionAddressCap(maxPerAddress: configuration.maxConnectionsPerAddress)
            }
            do {
                _ = try listener.start()
            } catch {
                if ownsGroup { group.shutdown(); self.group = nil; ownsGroup = false }
                throw error
            }
            self.listener = listener
            state = .running
        }
        // The readiness backend in use, so an operator sees what `server.poller: auto` chose.
        let loops = group?.loops ?? []
        let backend = loops.first.map { "\($0.pollerKind)" + ($0.usesIORing ? " + io_uring sends" : "") } ?? "?"
        context.logger.info("HTTP server listening", metadata: ["host": .string(configuration.host), "port": .stringConvertible(port),
                                                                "poller": .string(backend), "eventLoops": .stringConvertible(loops.count)])
        return port
    }

    /// Graceful shutdown (SIGTERM), quick when nothing is in flight:
    /// 1. stop accepting; idle keep-alive connections close at once; a request that arrives on a
    ///    kept-alive connection gets 503 + close; in-flight responses carry `Connection: close`;
    /// 2. `notify` runs — the place to tell long-lived clients (the Socket.IO hub closes each
    ///    WebSocket with a Close frame and answers pending polls with an Engine.IO close);
    /// 3. waits until every connection has sent its last byte (closed, or flushed and
    ///    half-closed), at most `shutdownGracePeriod` — no polling, a continuation;
    /// 4. closes whatever is left and stops the event loops (when owned).
    public func shutdown(notify: (@Sendable () async -> Void)? = nil) async {
        let proceed: Bool = lifecycle.withLock { state in
            guard state == .running else { return false }
            state = .shuttingDown
            return true
        }
        guard proceed, let listener, let group else { return }
        let started = ContinuousClock.now
        await listener.stop()
        await onEveryLoop { $0.beginDraining() }
        await notify?()
        let finishedInTime = await tracker.waitUntilFinished(timeout: configuration.shutdownGracePeriod.clockNanoseconds, loop: group.loops[0])
        if !finishedInTime {
            context.logger.warning("shutdown grace period (\(configuration.shutdownGracePeriod.wholeMilliseconds) ms) over with \(tracker.active) connections still sending; closing them")
        }
        // Close what is left (lingering connections included: everything has been sent).
        await onEveryLoop { $0.closeAll() }
        if ownsGroup {
            await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
                // EventLoopGroup.shutdown blocks (it joins every loop thread): keep it off the
                // cooperative pool, on a thread of its own that resumes this task when done.
                do {
                    try SpawnedThread.detach(name: "ts-loops-stop") { group.shutdown(); cont.resume() }
                } catch {
                    context.logger.error("cannot start a thread to stop the event loops (\(error)); stopping them on this one")
                    group.shutdown()
                    cont.resume()
                }
            }
        }
        lifecycle.withLock { $0 = .stopped }
        context.logger.info("HTTP server stopped", metadata: ["after": .string("\(ContinuousClock.now - started)")])
    }

    /// Runs `body` on every loop with that loop's registry, and returns once all have run it.
    private func onEveryLoop(_ body: @escaping @Sendable (HTTPLoopRegistry) -> Void) async {
        await withTaskGroup(of: Void.self) { tasks in
            for registry in registries {
                tasks.addTask {
                    await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
                        registry.loop.execute {
                            body(registry)
                            cont.resume()
                        }
                    }
                }
            }
        }
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

/// Per-loop bookkeeping of a server's connections. Its state belongs to `loop` (an
/// `EventLoopBound`, checked on every access): it is only touched inside `loop.execute` or a
/// ConnectionHandler callback, which run on the loop.
final class HTTPLoopRegistry: Sendable {
    let loop: EventLoop
    /// Runs request handlers on `loop` (when `HTTPServerConfiguration.handlersOnEventLoop`).
    let executor: EventLoopTaskExecutor
    private struct State {
        var handlers: [UInt64: HTTPConnectionHandler] = [:]
        /// Upgraded connections still open (removed by their `whenClosed` callback).
        var upgraded: [UInt64: Connection] = [:]
        var draining = false
    }
    private let state: EventLoopBound<State>

    init(loop: EventLoop) {
        self.loop = loop
        self.executor = EventLoopTaskExecutor(loop: loop)
        self.state = EventLoopBound(State(), loop: loop)
    }

    /// True once shutdown began on this loop.
    var draining: Bool { state.value.draining }

    func add(_ handler: HTTPConnectionHandler) { state.withValue { $0.handlers[handler.connection.id] = handler } }
    func remove(_ id: UInt64) { state.withValue { _ = $0.handlers.removeValue(forKey: id) } }

    func beginDraining() {
        state.withValue { $0.draining = true }
        for handler in Array(state.value.handlers.values) { handler.drain() }
    }

    func closeAll() {
        for handler in Array(state.value.handlers.values) { handler.connection.close(.serverShutdown) }
        let upgraded = state.withValue { s in defer { s.upgraded.removeAll() }; return Array(s.upgraded.values) }
        for connection in upgraded { connection.close(.serverShutdown) }
    }

    func addUpgraded(_ connection: Connection) {
        state.withValue { $0.upgraded[connection.id] = connection }
        connection.whenClosed { [self] c in state.withValue { _ = $0.upgraded.removeValue(forKey: c.id) } }
    }
}

/// Counts connections that may still send bytes (accepted, not yet closed or half-closed after
/// their last byte), so shutdown can wait for exactly that — with a continuation, not a poll.
final class HTTPOutputTracker: Sendable {
    private struct State {
        var active = 0
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = LockedValue(State())

    var active: Int { state.current.active }

    func opened() { state.withLock { $0.active += 1 } }

    func finished() {
        let ready: [CheckedContinuation<Bool, Never>] = state.withLock { s in
            s.active -= 1
            guard s.active <= 0 else { return [] }
            let w = Array(s.waiters.values)
            s.waiters.removeAll()
            return w
        }
        for c in ready { c.resume(returning: true) }
    }

    /// True once no connection is active; false when `timeout` (on `loop`'s clock) passed first.
    func waitUntilFinished(timeout: UInt64, loop: EventLoop) async -> Bool {
        await withCheckedContinuation { (cont: CheckedContinuation<Bool, Never>) in
            let id: UInt64? = state.withLock { s in
                if s.active <= 0 { return nil }
                s.nextWaiter += 1
                s.waiters[s.nextWaiter] = cont
                return s.nextWaiter
            }
            guard let id else { return cont.resume(returning: true) }
            loop.scheduleTask(in: timeout) { [self] in
                if let c = state.withLock({ $0.waiters.removeValue(forKey: id) }) { c.resume(returning: false) }
            }
        }
    }
}
