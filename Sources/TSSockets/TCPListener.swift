import Logging

/// Accepts TCP connections on one loop and spreads them over an `EventLoopGroup`.
///
/// Past `maxConnections` open connections, a new connection gets `rejectResponse()` written to it
/// (e.g. a canned HTTP 503) and is closed gracefully.
// @unchecked Sendable: `addressCap` and `makeTransform` are set before `start()` and only read
// afterwards; the listening socket belongs to `acceptLoop` (`EventLoopBound`), the counters live
// in a `LockedValue`; everything else is immutable.
public final class TCPListener: @unchecked Sendable {
    public let host: String
    public let requestedPort: Int
    public let group: EventLoopGroup
    /// Open (accepted, not rejected) connections above which new ones are rejected.
    public let maxConnections: Int
    /// Pending outbound bytes per connection before `.slowConsumer` (see `Connection.maxOutboundBytes`).
    public let maxOutboundBytes: Int
    /// listen(2) backlog.
    public let backlog: Int32
    let logger: Logger
    let rejectResponse: (@Sendable () -> [UInt8])?
    let makeHandler: @Sendable (Connection) -> ConnectionHandler
    /// Per-address cap (transport hook): refused connections get `rejectResponse()` and close.
    /// Set before `start()`; only read on the accept loop afterwards.
    public var addressCap: ConnectionAddressCap?
    /// TLS seam (tls hook): makes each admitted connection's `ConnectionTransform`. Set before `start()`.
    public var makeTransform: ConnectionTransformFactory?
    /// Connections refused at `maxConnections` or the address cap: logged at a bounded rate
    /// with their count, never a line each (a flood would fill the disk).
    public let refusals: RefusalLog

    private let acceptLoop: EventLoop
    /// The listening socket and its poller registration, on the accept loop.
    private let listening: EventLoopBound<(socket: Socket?, registration: UInt64)>
    private struct Shared { var count = 0; var port = 0; var nextID: UInt64 = 1; var stopped = false }
    private let shared = LockedValue(Shared())

    public init(host: String, port: Int, group: EventLoopGroup, maxConnections: Int = 10_000,
                maxOutboundBytes: Int = 4 * 1024 * 1024, backlog: Int32 = 1024,
                logger: Logger = Logger(label: "touchsync.listener"),
                rejectResponse: (@Sendable () -> [UInt8])? = nil,
                makeHandler: @escaping @Sendable (Connection) -> ConnectionHandler) {
        self.host = host
        self.requestedPort = port
        self.group = group
        self.maxConnections = maxConnections
        self.maxOutboundBytes = maxOutboundBytes
        self.backlog = backlog
        self.logger = logger
        self.rejectResponse = rejectResponse
        self.makeHandler = makeHandler
        self.acceptLoop = group.loops[0]
        self.listening = EventLoopBound((nil, 0), loop: acceptLoop)
        refusals = RefusalLog(subject: "TCP connections", logger: logger)
    }

    /// The bound port (valid after `start()`).
    public var boundPort: Int { shared.current.port }
    /// Connections accepted and not yet closed (rejected ones excluded).
    public var connectionCount: Int { shared.current.count }

    /// Binds, listens and starts accepting. Returns the bound port. Ignores SIGPIPE process-wide.
    public func start() throws -> Int {
        Socket.ignoreSIGPIPE()
        let socket = try Socket.makeListener(host: host, port: requestedPort, backlog: backlog)
        let port: Int
        do { port = try socket.localPort() } catch { socket.close(); throw error }
        shared.withLock { $0.port = port }
        let failure: SocketError? = acceptLoop.submitAndWait {
            do {
                self.listening.value = (socket, try self.acceptLoop.register(fd: socket.fd, events: .readable, self))
                return nil
            } catch let e as SocketError {
                socket.close()
                self.listening.value = (nil, 0)
                return e
            } catch {
                return nil
            }
        }
        if let failure { throw failure }
        return port
    }

    /// Stops accepting and closes the listening socket. Existing connections are untouched.
    /// Blocks until done unless called on the accept loop.
    public func stop() {
        if markStopped() { return }
        acceptLoop.submitAndWait { self.stopOnLoop() }
    }

    /// `stop()` for a task: it suspends (never blocks its thread) until the accept loop has
    /// closed the socket.
    public func stop() async {
        if markStopped() { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            acceptLoop.executeOrRun {
                self.stopOnLoop()
                continuation.resume()
            }
        }
    }

    /// Marks the listener stopped; true when it already was.
    private func markStopped() -> Bool {
        shared.withLock { s in
            defer { s.stopped = true }
            return s.stopped
        }
    }

    private func stopOnLoop() {
        let (socket, registration) = listening.value
        guard let socket else { return }
        acceptLoop.deregister(fd: socket.fd, registration: registration)
        socket.close()
        listening.value = (nil, 0)
    }

    private func acceptAll() {
        guard let listener = listening.value.socket else { return }
        for _ in 0..<256 {
            let result: AcceptResult
            do {
                result = try listener.accept()
            } catch let error as SocketError {
                logger.error("accept failed", metadata: ["error": "\(error)"])
                if error.errno == EMFILE || error.errno == ENFILE || error.errno == ENOBUFS || error.errno == ENOMEM {
                    // Out of descriptors: stop polling the listener briefly instead of spinning.
                    pauseAccepting(for: 100_000_000)
                }
                return
            } catch { return }
            guard case .accepted(let client, let remote) = result else { return }
            do {
                try client.setNoDelay()
            } catch {
                // Not fatal (e.g. the peer already reset); the first read/write will report it.
            }
            let (id, underTotal): (UInt64, Bool) = shared.withLock { s in
                let id = s.nextID
                s.nextID += 1
                if s.count >= maxConnections { return (id, false) }
                s.count += 1
                return (id, true)
            }
            let overAddressCap = underTotal && addressCap.map { !$0.acquire(remote) } == true  // ConnectionAddressCap hook
            if overAddressCap { shared.withLock { $0.count -= 1 } }
            let admitted = underTotal && !overAddressCap
            if !underTotal {
                refusals.record(address: ConnectionAddressCap.host(of: remote),
                                reason: "\(maxConnections) open (server.maxConnections): answered 503 and closed", loop: acceptLoop)
            } else if overAddressCap, let cap = addressCap {
                refusals.record(address: ConnectionAddressCap.host(of: remote),
                                reason: "\(cap.maxPerAddress) open from that address (server.maxConnectionsPerAddress): answered 503 and closed",
                                loop: acceptLoop)
            }
            let loop = group.next()
            let connection = Connection(id: id, socket: client, loop: loop, remoteAddress: remote,
                                        maxOutboundBytes: maxOutboundBytes)
            if admitted {
                let cap = addressCap
                connection.onClosed = { [weak self] c in
                    cap?.release(c.remoteAddress)
                    self?.shared.withLock { $0.count -= 1 }
                }
            }
            loop.execute { [self] in
                do {
                    try connection.activate()
                } catch let e as SocketError {
                    connection.close(.error(e))
                    return
                } catch { return }
                if admitted {
                    if let make = self.makeTransform { connection.transform = make(connection) }  // tls hook
                    if connection.isOpen { connection.handler = self.makeHandler(connection) }
                } else {
                    if let reject = self.rejectResponse, self.makeTransform == nil { connection.write(reject()) }
                    if overAddressCap { connection.lingerNanoseconds = 200_000_000 }
                    connection.closeGracefully(.local(overAddressCap ? "max connections per address reached" : "max connections reached"))
                }
            }
        }
    }

    private func pauseAccepting(for nanoseconds: UInt64) {
        let (socket, registration) = listening.value
        guard let socket else { return }
        do { try acceptLoop.modify(fd: socket.fd, registration: registration, events: []) } catch { return }
        acceptLoop.scheduleTask(in: nanoseconds) { [weak self] in
            guard let self, let s = self.listening.value.socket else { return }
            try? self.acceptLoop.modify(fd: s.fd, registration: self.listening.value.registration, events: .readable)
        }
    }
}

extension TCPListener: EventLoopSelectable {
    func handleEvents(_ events: PollerEvents) { acceptAll() }
}
