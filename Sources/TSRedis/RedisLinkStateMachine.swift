/// The connection logic of one `RedisLink`, as a value: every event (a timer, a resolved host,
/// bytes read, a close) returns the actions the link must perform, in order, and the link keeps no
/// flags of its own (the shape of postgres-nio's `ConnectionStateMachine`). It owns the RESP
/// decoder, so replies are decoded here and handed back as `.deliver` actions. Pure: no I/O, no
/// clock (times come with the events); tested event by event with byte fixtures in
/// `RedisLinkStateMachineTests`.
///
///     stopped ──start──▶ connecting ──handshake answered──▶ ready
///        ▲                 │  ▲                               │
///        │        failure  ▼  └──retry timer── waiting ◀──────┘ loss (close, bad bytes, no PONG)
///        └────────────────── stop (from any state) ──────────────
///
/// Every attempt gets a new generation; timers and resolver callbacks carry the generation they
/// were armed for, and events of an older attempt are ignored.
struct RedisLinkStateMachine {
    enum State: Equatable {
        case stopped
        /// Resolving, connecting, or waiting for `handshakeRemaining` handshake replies.
        case connecting(handshakeRemaining: Int)
        /// Handshake done; `heardSincePing`: a byte arrived since the last PING went out.
        case ready(heardSincePing: Bool)
        /// Between a failure and the next attempt (the retry timer is armed).
        case waiting
    }

    /// The log line a failure calls for (at most one per failure; the rest are quiet).
    enum DownLog: Equatable {
        /// The first failure of an outage: "lost" when the connection was ready, else "failed".
        case first(wasReady: Bool)
        /// Still down, a summary at most every `RedisLink.downLogInterval`.
        case stillDown(downNanoseconds: UInt64, failedAttempts: Int)
        case quiet
    }

    enum Action: Equatable {
        /// Start attempt `generation`: fresh connection state, arm the attempt deadline, resolve the host.
        case startAttempt(generation: UInt64)
        /// Connect to the resolved address and write the handshake commands.
        case connect(address: String, generation: UInt64)
        /// The handshake completed: reset the backoff, arm the PING timer, tell the role.
        /// `downNanoseconds`/`failedAttempts`: the outage just ended (nil on a first connect);
        /// `reconnect`: the link had been ready before.
        case ready(downNanoseconds: UInt64?, failedAttempts: Int, reconnect: Bool)
        /// A reply for the role (never a handshake reply nor a PONG).
        case deliver(RESPValue)
        /// Write a PING and arm the next PING timer.
        case sendPing
        /// Close the connection, cancel the timers, record `reason`, tell the role, arm the retry
        /// timer with the next backoff delay; log as `log` says.
        case fail(reason: String, log: DownLog)
        /// Close for good: cancel every timer, close the connection.
        case stop
    }

    private(set) var state: State = .stopped
    /// Bumped on every attempt and every stop.
    private(set) var generation: UInt64 = 0
    private let handshakeCount: Int
    private let decoderLimits: RESPDecoder.Limits
    private var decoder: RESPDecoder
    private var everReady = false
    private var downSince: UInt64?
    private(set) var failedAttempts = 0
    private var lastDownLog: UInt64 = 0
    let downLogInterval: UInt64

    init(handshakeCount: Int, decoderLimits: RESPDecoder.Limits, downLogInterval: UInt64) {
        self.handshakeCount = handshakeCount
        self.decoderLimits = decoderLimits
        self.downLogInterval = downLogInterval
        decoder = RESPDecoder(limits: decoderLimits)
    }

    var isReady: Bool { if case .ready = state { return true } else { return false } }

    // MARK: events

    /// Start connecting (ignored unless stopped).
    mutating func start() -> Action? {
        guard state == .stopped else { return nil }
        return attempt()
    }

    /// Close for good.
    mutating func stop() -> Action {
        state = .stopped
        generation &+= 1
        return .stop
    }

    /// The retry timer fired.
    mutating func retryTimerFired() -> Action? {
        guard state == .waiting else { return nil }
        return attempt()
    }

    /// The host of attempt `generation` resolved to `address`.
    mutating func resolved(_ address: String, generation gen: UInt64) -> Action? {
        guard gen == generation, case .connecting = state else { return nil }
        return .connect(address: address, generation: gen)
    }

    /// Resolving, connecting or the attempt deadline of attempt `generation` failed.
    mutating func attemptFailed(_ reason: String, generation gen: UInt64, now: UInt64) -> Action? {
        guard gen == generation, case .connecting = state else { return nil }
        return fail(reason, now: now)
    }

    /// The connection of the current attempt is up and its handshake written: with no handshake
    /// commands it is ready at once.
    mutating func connected(now: UInt64) -> Action? {
        guard handshakeCount == 0, case .connecting = state else { return nil }
        return becomeReady(now: now)
    }

    /// Bytes arrived on the current connection: the handshake replies, PONGs and replies for the
    /// role, decoded, in order; a refused handshake or undecodable bytes end with `.fail`.
    mutating func bytesRead(_ bytes: UnsafeRawBufferPointer, now: UInt64) -> [Action] {
        switch state {
        case .stopped, .waiting: return []
        case .ready: state = .ready(heardSincePing: true)
        case .connecting: break
        }
        let values: [RESPValue]
        do { values = try decoder.feed(bytes) } catch {
            return fail("\(error)", now: now).map { [$0] } ?? []
        }
        var actions: [Action] = []
        for value in values {
            switch state {
            case .connecting(let remaining) where remaining > 0:
                if case .error(let message) = value {
                    if let f = fail("handshake refused: \(message)", now: now) { actions.append(f) }
                    return actions
                }
                state = .connecting(handshakeRemaining: remaining - 1)
                if remaining == 1 { actions.append(becomeReady(now: now)) }
            case .ready:
                if case .simpleString(let s) = value, s == "PONG" { continue }
                if case .array(let items?) = value, items.first?.text == "pong" { continue }
                actions.append(.deliver(value))
            default:
                return actions
            }
        }
        return actions
    }

    /// The PING timer fired: a PING when the server said something since the last one, else the
    /// connection is taken as dead.
    mutating func pingTimerFired(generation gen: UInt64, now: UInt64, pingInterval: String) -> Action? {
        guard gen == generation, case .ready(let heard) = state else { return nil }
        if !heard { return fail("no answer to PING within \(pingInterval)", now: now) }
        state = .ready(heardSincePing: false)
        return .sendPing
    }

    /// The current connection closed under us.
    mutating func connectionClosed(_ reason: String, now: UInt64) -> Action? {
        fail("connection closed (\(reason))", now: now)
    }

    // MARK: transitions

    private mutating func attempt() -> Action {
        generation &+= 1
        state = .connecting(handshakeRemaining: handshakeCount)
        decoder = RESPDecoder(limits: decoderLimits)
        return .startAttempt(generation: generation)
    }

    private mutating func becomeReady(now: UInt64) -> Action {
        state = .ready(heardSincePing: true)
        let action = Action.ready(downNanoseconds: downSince.map { now &- $0 }, failedAttempts: failedAttempts, reconnect: everReady)
        everReady = true
        downSince = nil
        failedAttempts = 0
        return action
    }

    /// The attempt failed or the ready connection was lost (nil when neither is under way).
    private mutating func fail(_ reason: String, now: UInt64) -> Action? {
        let wasReady: Bool
        switch state {
        case .connecting: wasReady = false
        case .ready: wasReady = true
        case .stopped, .waiting: return nil
        }
        generation &+= 1
        state = .waiting
        failedAttempts += wasReady ? 0 : 1
        let log: DownLog
        if wasReady || downSince == nil {
            if downSince == nil { downSince = now }
            log = .first(wasReady: wasReady)
            lastDownLog = now
        } else if now &- lastDownLog >= downLogInterval {
            log = .stillDown(downNanoseconds: now &- (downSince ?? now), failedAttempts: failedAttempts)
            lastDownLog = now
        } else {
            log = .quiet
        }
        return .fail(reason: reason, log: log)
    }
}
