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
// @unchecked Sendable: the callbacks are not `@Sendable` but are only called on `loop`, where the
// mutable state lives (`EventLoopBound`); the entry points are called there (or hop to it).
final class RedisLink: ConnectionHandler, @unchecked Sendable {
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

    private struct State {
        /// Where the link is (stopped, connecting, ready, waiting) and the outage bookkeeping; every
        /// event goes through it and the link performs what it answers (`perform`).
        var machine: RedisLinkStateMachine
        var connection: Connection?
        var backoff: RedisBackoff
        var attemptTimer: ScheduledTaskHandle?
        var pingTimer: ScheduledTaskHandle?
        var retryTimer: ScheduledTaskHandle?
    }

    private let state: EventLoopBound<State>
    static let downLogInterval: UInt64 = 30_000_000_000

    /// Loop only.
    var isReady: Bool { state.withValue { $0.machine.isReady } }

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
            var auth: [[UInt8]] = [Array("AUTH".utf8)]
            if let username = configuration.url.username { auth.append(Array(username.utf8)) }
            auth.append(Array(password.utf8))
            commands.append(RESPEncoder.command(auth))
        }
        self.handshake = commands + handshake
        self.onReady = onReady
        self.onReply = onReply
        self.onDown = onDown
        state = EventLoopBound(State(machine: RedisLinkStateMachine(handshakeCount: self.handshake.count, decoderLimits: configuration.decoderLimits,
                                                                    downLogInterval: Self.downLogInterval),
                                     backoff: RedisBackoff(minimum: configuration.reconnectMinDelay, maximum: configuration.reconnectMaxDelay)),
                               loop: loop)
        connectionIDs = LockedValue(0)
    }

    /// Starts connecting (loop only).
    func start() {
        perform(state.withValue { $0.machine.start() })
    }

    /// Closes for good (loop only).
    func stop() {
        perform(state.withValue { $0.machine.stop() })
    }

    /// Writes bytes on the ready connection (loop only). False when not ready.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard let connection = state.withValue({ $0.machine.isReady ? $0.connection : nil }) else { return false }
        connection.write(bytes)
        return true
    }

    // MARK: performing the state machine's actions

    private func perform(_ action: RedisLinkStateMachine.Action?) {
        guard let action else { return }
        switch action {
        case .startAttempt(let gen):
            // A total deadline for the whole attempt: resolve, connect, handshake.
            let timer = loop.scheduleTask(in: configuration.connectTimeout.clockNanoseconds) { [self] in
                let now = loop.clock.now()
                perform(state.withValue { $0.machine.attemptFailed("no ready connection within \(configuration.connectTimeout)", generation: gen, now: now) })
            }
            state.withValue { s in s.attemptTimer?.cancel(); s.attemptTimer = timer }
            RedisHostResolver.resolve(configuration.url.host, on: loop) { [self] result in
                let now = loop.clock.now()
                switch result {
                case .failure(let e): perform(state.withValue { $0.machine.attemptFailed(e.description, generation: gen, now: now) })
                case .success(let address): perform(state.withValue { $0.machine.resolved(address, generation: gen) })
                }
            }
        case .connect(let address, let gen):
            connect(to: address, gen: gen)
        case .ready(let downNanoseconds, let failedAttempts, let reconnect):
            state.withValue { s in s.attemptTimer?.cancel(); s.attemptTimer = nil; s.backoff.reset() }
            if reconnect { stats.count(\.reconnects) }
            if let down = downNanoseconds {
                let secs = Double(down) / 1e9
                logger.notice("redis \(name) connection to \(configuration.url) is back after \(secs.formatted2)s down (\(failedAttempts) failed attempts)")
            } else {
                logger.info("redis \(name) connection to \(configuration.url) ready")
            }
            schedulePing()
            onReady()
        case .deliver(let value):
            onReply(value)
        case .sendPing:
            state.value.connection?.write(RESPEncoder.command("PING"))
            schedulePing()
        case .fail(let reason, let log):
            let c = state.withValue { s in
                s.attemptTimer?.cancel(); s.attemptTimer = nil
                s.pingTimer?.cancel(); s.pingTimer = nil
                defer { s.connection = nil }
                return s.connection
            }
            c?.close(.local("redis: \(reason)"))
            stats.setError("\(name): \(reason)")
            switch log {
            case .first(let wasReady):
                logger.error("redis \(name) connection to \(configuration.url) \(wasReady ? "lost" : "failed"): \(reason); cross-node fan-out is degraded, reconnecting with backoff")
            case .stillDown(let down, let failedAttempts):
                let secs = Double(down) / 1e9
                logger.error("redis \(name) connection to \(configuration.url) still down after \(secs.formatted2)s (\(failedAttempts) failed attempts): \(reason)")
            case .quiet:
                break
            }
            onDown(reason)
            let delay = state.withValue { $0.backoff.nextDelay() }
            let timer = loop.scheduleTask(in: delay.clockNanoseconds) { [self] in perform(state.withValue { $0.machine.retryTimerFired() }) }
            state.withValue { s in s.retryTimer?.cancel(); s.retryTimer = timer }
        case .stop:
            let c = state.withValue { s in
                s.attemptTimer?.cancel(); s.attemptTimer = nil
                s.pingTimer?.cancel(); s.pingTimer = nil
                s.retryTimer?.cancel(); s.retryTimer = nil
                defer { s.connection = nil }
                return s.connection
            }
            c?.close(.local("redis client stopped"))
        }
    }

    private func connect(to address: String, gen: UInt64) {
        let id = connectionIDs.withLock { v -> UInt64 in v &+= 1; return v }
        do {
            let c = try Connection.connect(host: address, port: configuration.url.port, on: loop, id: id,
                                           maxOutboundBytes: configuration.maxPendingBytes + (1 << 20)) { _ in self }
            // Our own queue bounds the backlog (maxPendingBytes); the peer is a server we trust to read.
            c.outboundStallTimeout = max(configuration.connectTimeout.clockNanoseconds, 1_000_000_000) * 6
            state.value.connection = c
            for command in handshake { c.write(command) }
            let now = loop.clock.now()
            perform(state.withValue { $0.machine.connected(now: now) })
        } catch {
            let now = loop.clock.now()
            perform(state.withValue { $0.machine.attemptFailed("connect to \(address):\(configuration.url.port): \(error)", generation: gen, now: now) })
        }
    }

    private func schedulePing() {
        let gen = state.withValue { s in s.pingTimer?.cancel(); return s.machine.generation }
        let timer = loop.scheduleTask(in: configuration.pingInterval.clockNanoseconds) { [self] in
            let now = loop.clock.now()
            perform(state.withValue { $0.machine.pingTimerFired(generation: gen, now: now, pingInterval: "\(configuration.pingInterval)") })
        }
        state.value.pingTimer = timer
    }

    // MARK: ConnectionHandler

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        let now = loop.clock.now()
        let read: (gen: UInt64, actions: [RedisLinkStateMachine.Action])? = state.withValue { s in
            guard connection === s.connection else { return nil }
            return (s.machine.generation, s.machine.bytesRead(bytes, now: now))
        }
        guard let read else { return }
        for action in read.actions {
            // A reply handler may have stopped the link: what follows belongs to an older attempt.
            if case .deliver = action, state.withValue({ $0.machine.generation }) != read.gen { return }
            perform(action)
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        let now = loop.clock.now()
        perform(state.withValue { s in
            guard connection === s.connection else { return nil }
            s.connection = nil
            return s.machine.connectionClosed("\(reason)", now: now)
        })
    }
}

extension Double {
    var formatted2: String {
        let v = (self * 100).rounded() / 100
        return String(v)
    }
}

extension EventLoop {
    /// Runs `closing` on this loop's thread (where a transport's connections live), waits until it
    /// has, then stops the thread: how `RedisPubSub` and `RedisStream` close both their connections.
    func shutdown(after closing: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            execute {
                closing()
                done.resume()
            }
        }
        shutdown()
    }
}
