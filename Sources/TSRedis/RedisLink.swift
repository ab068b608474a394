import Logging
import TSSockets

/// One Redis connection that keeps itself up: resolve, connect(2), a handshake (AUTH, then the
/// role's first command), PINGs while idle, and on any loss a reconnect after a backoff
/// (`RedisBackoff`). Replies after the handshake go to `onReply`, in order. PONGs are swallowed
/// here (`+PONG`, or `["pong", …]` on a subscribed connection, RESP spec §"Pub/Sub"): any byte
/// from the server proves the connection alive.
///
/// Logging: the loss is one error line, a failed attempt while down is logged at most every
/// `RedisLink.downLogInterval`, the recovery is one notice line with the time it was down.
// @unchecked Sendable: every mutable property is only touched on `loop` (public entry points hop to it).
final class RedisLink: ConnectionHandler, @unchecked Sendable {
    enum State: Equatable { case stopped, connecting, ready, waiting }

    let name: String
    let loop: EventLoop
    let configuration: RedisConfiguration
    let logger: Logger
    private let handshake: [[UInt8]]
    private let onReady: () -> Void
    private let onReply: (RESPValue) -> Void
    private let onDown: (_ reason: String) -> Void
    private let stats: RedisStats
    private let connectionIDs: LockedValue<UInt64>

    private(set) var state: State = .stopped
    private var connection: Connection?
    private var decoder: RESPDecoder
    private var handshakeRemaining = 0
    private var backoff: RedisBackoff
    private var attemptTimer: ScheduledTaskHandle?
    private var pingTimer: ScheduledTaskHandle?
    private var retryTimer: ScheduledTaskHandle?
    private var heardSincePing = true
    /// Bumped on every attempt: callbacks of an older attempt are ignored.
    private var generation: UInt64 = 0
    private var everReady = false
    private var downSince: UInt64?
    private var failedAttempts = 0
    private var lastDownLog: UInt64 = 0
    static let downLogInterval: UInt64 = 30_000_000_000

    init(name: String, loop: EventLoop, configuration: RedisConfiguration, stats: RedisStats, logger: Logger, handshake: [[UInt8]],
         onReady: @escaping () -> Void, onReply: @escaping (RESPValue) -> Void, onDown: @escaping (String) -> Void) {
        self.name = name
        self.loop = loop
        self.configuration = configuration
        self.stats = stats
        self.logger = logger
        var commands: [[UInt8]] = []
        if let password = configuration.url.password {
            // AUTH [username] password (Redis 6 ACL form when a username is given).
            commands.append(RESPEncoder.command([Array("AUTH".utf8)] + (configuration.url.username.map { [Array($0.utf8)] } ?? [])
                                                + [Array(password.utf8)]))
        }
        self.handshake = commands + handshake
        self.onReady = onReady
        self.onReply = onReply
        self.onDown = onDown
        decoder = RESPDecoder(limits: configuration.decoderLimits)
        backoff = RedisBackoff(minimum: configuration.reconnectMinDelay, maximum: configuration.reconnectMaxDelay)
        connectionIDs = LockedValue(0)
    }

    /// Starts connecting (loop only).
    func start() {
        assert(loop.inEventLoop)
        guard state == .stopped else { return }
        attempt()
    }

    /// Closes for good (loop only).
    func stop() {
        assert(loop.inEventLoop)
        state = .stopped
        generation &+= 1
        attemptTimer?.cancel(); attemptTimer = nil
        pingTimer?.cancel(); pingTimer = nil
        retryTimer?.cancel(); retryTimer = nil
        let c = connection
        connection = nil
        c?.close(.local("redis client stopped"))
    }

    /// Writes bytes on the ready connection (loop only). False when not ready.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard state == .ready, let connection else { return false }
        connection.write(bytes)
        return true
    }

    // MARK: connecting

    private func attempt() {
        generation &+= 1
        let gen = generation
        state = .connecting
        decoder = RESPDecoder(limits: configuration.decoderLimits)
        handshakeRemaining = handshake.count
        // A total deadline for the whole attempt: resolve, connect, handshake.
        attemptTimer?.cancel()
        attemptTimer = loop.scheduleTask(in: configuration.connectTimeout.nanosecondsClamped) { [self] in
            guard gen == generation, state == .connecting else { return }
            fail("no ready connection within \(configuration.connectTimeout)")
        }
        RedisHostResolver.resolve(configuration.url.host, on: loop) { [self] result in
            guard gen == generation, state == .connecting else { return }
            switch result {
            case .failure(let e): fail(e.description)
            case .success(let address): connect(to: address, gen: gen)
            }
        }
    }

    private func connect(to address: String, gen: UInt64) {
        let id = connectionIDs.withLock { v -> UInt64 in v &+= 1; return v }
        do {
            let c = try Connection.connect(host: address, port: configuration.url.port, on: loop, id: id,
                                           maxOutboundBytes: configuration.maxPendingBytes + (1 << 20)) { _ in self }
            // Our own queue bounds the backlog (maxPendingBytes); the peer is a server we trust to read.
            c.outboundStallTimeout = max(configuration.connectTimeout.nanosecondsClamped, 1_000_000_000) * 6
            connection = c
            for command in handshake { c.write(command) }
            if handshake.isEmpty { becomeReady() }
        } catch {
            fail("connect to \(address):\(configuration.url.port): \(error)")
        }
    }

    private func becomeReady() {
        state = .ready
        attemptTimer?.cancel(); attemptTimer = nil
        backoff.reset()
        if everReady { stats.count(\.reconnects) }
        if let since = downSince {
            let secs = Double(loop.clock.now() &- since) / 1e9
            logger.notice("redis \(name) connection to \(configuration.url) is back after \(secs.formatted2)s down (\(failedAttempts) failed attempts)")
        } else {
            logger.info("redis \(name) connection to \(configuration.url) ready")
        }
        everReady = true
        downSince = nil
        failedAttempts = 0
        heardSincePing = true
        schedulePing()
        onReady()
    }

    private func schedulePing() {
        pingTimer?.cancel()
        let gen = generation
        pingTimer = loop.scheduleTask(in: configuration.pingInterval.nanosecondsClamped) { [self] in
            guard gen == generation, state == .ready else { return }
            if !heardSincePing {
                return fail("no answer to PING within \(configuration.pingInterval)")
            }
            heardSincePing = false
            connection?.write(RESPEncoder.command("PING"))
            schedulePing()
        }
    }

    /// The attempt failed or the ready connection was lost: close it, tell the role, retry later.
    private func fail(_ reason: String) {
        guard state == .connecting || state == .ready else { return }
        let wasReady = state == .ready
        generation &+= 1
        state = .waiting
        attemptTimer?.cancel(); attemptTimer = nil
        pingTimer?.cancel(); pingTimer = nil
        let c = connection
        connection = nil
        c?.close(.local("redis: \(reason)"))
        stats.setError("\(name): \(reason)")
        let now = loop.clock.now()
        failedAttempts += wasReady ? 0 : 1
        if wasReady || downSince == nil {
            if downSince == nil { downSince = now }
            logger.error("redis \(name) connection to \(configuration.url) \(wasReady ? "lost" : "failed"): \(reason); cross-node fan-out is degraded, reconnecting with backoff")
            lastDownLog = now
        } else if now &- lastDownLog >= Self.downLogInterval {
            let secs = Double(now &- (downSince ?? now)) / 1e9
            logger.error("redis \(name) connection to \(configuration.url) still down after \(secs.formatted2)s (\(failedAttempts) failed attempts): \(reason)")
            lastDownLog = now
        }
        onDown(reason)
        let delay = backoff.nextDelay()
        retryTimer?.cancel()
        retryTimer = loop.scheduleTask(in: delay.nanosecondsClamped) { [self] in
            guard state == .waiting else { return }
            attempt()
        }
    }

    // MARK: ConnectionHandler

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        guard connection === self.connection else { return }
        heardSincePing = true
        let values: [RESPValue]
        do { values = try decoder.feed(bytes) } catch {
            return fail("\(error)")
        }
        for value in values {
            guard connection === self.connection else { return }  // a reply made us fail
            if handshakeRemaining > 0 {
                handshakeRemaining -= 1
                if case .error(let message) = value {
                    return fail("handshake refused: \(message)")
                }
                if handshakeRemaining == 0 { becomeReady() }
                continue
            }
            if case .simpleString(let s) = value, s == "PONG" { continue }
            if case .array(let items?) = value, items.first?.text == "pong" { continue }
            onReply(value)
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        guard connection === self.connection else { return }
        self.connection = nil
        fail("connection closed (\(reason))")
    }
}

extension Double {
    var formatted2: String {
        let v = (self * 100).rounded() / 100
        return String(v)
    }
}
