import Logging
import TSJSON
import TSSockets

/// What a session needs from a WebSocket: implemented by `WebSocketConnection`. Broadcasts use
/// the last two requirements to write the same pre-encoded frame bytes to many connections, one
/// hop per event loop (`EngineBroadcastBatch`), through this protocol rather than a concrete type.
protocol EngineWebSocketTransport: AnyObject, Sendable {
    func engineSend(text: String)
    func engineSend(binary: [UInt8])
    func engineSend(frame: [UInt8])
    /// Writes `frame`, then calls `next` once that write has been flushed to the kernel and
    /// `gapNanoseconds` more have passed (on a later loop iteration), so the next write leaves
    /// in its own send, late enough for the peer to have read this one.
    func engineSend(frame: [UInt8], thenAfter gapNanoseconds: UInt64, _ next: @escaping @Sendable () -> Void)
    func engineClose()
    /// Calls `body` once this WebSocket's loop has taken in (and handled) what had already
    /// arrived on it: after a later loop iteration, which polls the socket again.
    func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void)
    /// The event loop that owns this WebSocket's connection (broadcasts group recipients by it).
    var loop: EventLoop { get }
    /// Appends complete frame bytes to the outbound queue; only on `loop` (a broadcast has
    /// already hopped there once for all of that loop's recipients).
    func sendFrameBytesOnLoop(_ bytes: [UInt8])
}

/// What every session of one server shares (immutable).
final class EngineIOSessionContext: Sendable {
    let configuration: EngineIOConfiguration
    let clock: any MonotonicClock
    let timerLoop: EventLoop
    /// Every session's heartbeat timer, on one task of `timerLoop`.
    let timers: EngineSessionTimers

    init(configuration: EngineIOConfiguration, clock: any MonotonicClock, timerLoop: EventLoop) {
        self.configuration = configuration
        self.clock = clock
        self.timerLoop = timerLoop
        timers = EngineSessionTimers(loop: timerLoop, clock: clock)
    }
}

/// The outcome of a long-polling GET.
enum EnginePollOutcome: Sendable {
    case payload([UInt8])
    case error(EngineHTTPError)
    /// The connection closes with no answer (a server shutdown: what a process exit does).
    case noAnswer
}

/// One Engine.IO session (Engine.IO v4, "Session"): an id, a transport, a heartbeat.
///
/// Thread-safety: every mutable field is guarded by `lock`. Network writes, continuation
/// resumes and delegate calls happen after the lock is released (collected as deferred
/// actions), so a callback may call back into the session without deadlocking.
// @unchecked Sendable: all mutable state is behind `lock` (see `State`) except `timerLink`, which
// only `shared.timers` touches, under its own lock; the lets are immutable.
public final class EngineIOSession: @unchecked Sendable {
    public let id: String
    /// Query, headers and peer of the request that opened the session.
    public let handshake: EngineHandshakeInfo
    /// The Engine.IO protocol revision of the client: 4, or 3 (`EIO=3`, with
    /// `allowEIO3`): the client pings, polling payloads are length-prefixed, binary WebSocket
    /// messages carry their type byte.
    public let protocolVersion: Int
    /// v3 only: the client reads binary polling payloads (it did not ask for `b64=1`).
    let supportsBinary: Bool
    /// Configuration, clock and timer loop, shared by every session of the server (one
    /// reference per session instead of a copy of each).
    let shared: EngineIOSessionContext
    var configuration: EngineIOConfiguration { shared.configuration }
    var clock: any MonotonicClock { shared.clock }
    var timerLoop: EventLoop { shared.timerLoop }
    weak var server: EngineIOServer?

    enum UpgradeState { case none, attached, probed, done }

    /// What only a polling session (or one upgrading from polling) uses, allocated on first use
    /// (`State.polling`): a session opened over WebSocket never allocates it. Guarded by the
    /// session's lock, like `State`.
    final class PollingState {
        var queue: EnginePollingQueue
        var pendingPoll: CheckedContinuation<EnginePollOutcome, Never>?
        var pollGeneration: UInt64 = 0
        var closeReplyForNextPoll: [UInt8]?
        var probe: (any EngineWebSocketTransport)?
        init(maxBytes: Int) { queue = EnginePollingQueue(maxBytes: maxBytes) }
    }

    struct State {
        var transport: EngineTransport
        var closed = false
        /// The polling-only fields below live here once first written (nil reads as empty).
        var polling: PollingState?
        /// `maxBufferedPacketsBytes`, for the polling queue when it is created.
        let queueMaxBytes: Int
        var queue: EnginePollingQueue {
            get { polling?.queue ?? EnginePollingQueue(maxBytes: queueMaxBytes) }
            _modify {
                let p = pollingState()
                yield &p.queue
            }
        }
        var pendingPoll: CheckedContinuation<EnginePollOutcome, Never>? {
            get { polling?.pendingPoll }
            set { if newValue != nil || polling != nil { pollingState().pendingPoll = newValue } }
        }
        var pollGeneration: UInt64 {
            get { polling?.pollGeneration ?? 0 }
            set { pollingState().pollGeneration = newValue }
        }
        var ws: (any EngineWebSocketTransport)?
        var probe: (any EngineWebSocketTransport)? {
            get { polling?.probe }
            set { if newValue != nil || polling != nil { pollingState().probe = newValue } }
        }
        var upgrade = UpgradeState.none
        var heartbeat: EngineHeartbeat
        /// The deadline this session's timer is armed for (in `shared.timers`), if any.
        var timerDeadline: UInt64?
        /// When the client closed over polling (`1` in a POST) and no GET was parked to receive
        /// the `6`, the GET of that long-poll cycle is still on its way (on another connection,
        /// handled by another loop): the next GET gets this `6` once; later ones get 400. So a
        /// close completes exactly one outstanding GET, whichever loop runs first.
        var closeReplyForNextPoll: [UInt8]? {
            get { polling?.closeReplyForNextPoll }
            set { if newValue != nil || polling != nil { pollingState().closeReplyForNextPoll = newValue } }
        }
        /// Set-up pacing (Socket.IO CONNECT reply and the connect handler's emits): while
        /// `pacing`, or while a paced write is in flight, websocket frames queue in `pacedQueue`.
        /// The first is written alone; once that write has left (flushed, plus
        /// `EngineSetupPacing.gap`), everything queued meanwhile goes in one write — as the
        /// reference writes only after the previous write completed, then flushes its buffer.
        var pacing = false
        var pacedInFlight = false
        var pacedQueue: [[UInt8]] = []
        /// `userInfo` (kept under the session lock: no lock object of its own per session).
        var userInfo: (any AnyObject & Sendable)?
        /// Injected faults (test mode; `EngineIOSession+Faults.swift`), nil when none.
        var faults: EngineSessionFaults?
        // While a probe is attached, sends keep going to `queue` (polling); on the client's
        // `5` the queue is flushed over the new websocket, so order survives the switch.

        init(transport: EngineTransport, queueMaxBytes: Int, heartbeat: EngineHeartbeat) {
            self.transport = transport
            self.queueMaxBytes = queueMaxBytes
            self.heartbeat = heartbeat
        }

        private mutating func pollingState() -> PollingState {
            if let p = polling { return p }
            let p = PollingState(maxBytes: queueMaxBytes)
            polling = p
            return p
        }
    }

    /// Guards `state`, and only this session's state: the layer above keeps its own lock for its
    /// own per-connection state (Socket.IO's `SocketIOClient`). The session calls nothing outside
    /// while holding it: writes, resumes and delegate calls run after release (`Deferred`), and
    /// packets are decoded before it is taken.
    let lock = Mutex()
    var state: State
    /// This session's place in `shared.timers` (guarded by that object's lock, not `lock`).
    var timerLink = EngineSessionTimers.Link()

    /// Opaque storage for the layer above (Socket.IO keeps its per-connection client here). An
    /// object: one pointer per session, not a 40-byte existential of any value.
    public var userInfo: (any AnyObject & Sendable)? {
        get { lock.withLock { state.userInfo } }
        set { lock.withLock { state.userInfo = newValue } }
    }

    init(id: String, transport: EngineTransport, handshake: EngineHandshakeInfo,
         shared: EngineIOSessionContext, server: EngineIOServer, protocolVersion: Int = 4) {
        let configuration = shared.configuration
        self.id = id
        self.handshake = handshake
        self.protocolVersion = protocolVersion
        supportsBinary = handshake.query["b64"] == nil
        self.shared = shared
        self.server = server
        state = State(transport: transport,
                      queueMaxBytes: configuration.maxBufferedPacketsBytes,
                      heartbeat: EngineHeartbeat(now: shared.clock.now(),
                                                 pingIntervalNanoseconds: max(.milliseconds(1), configuration.pingInterval).clockNanoseconds,
                                                 pingTimeoutNanoseconds: max(.milliseconds(1), configuration.pingTimeout).clockNanoseconds,
                                                 clientPings: protocolVersion == 3))
    }

    public var transport: EngineTransport { lock.withLock { state.transport } }
    public var isClosed: Bool { lock.withLock { state.closed } }

    /// The open packet (Engine.IO v4, "Handshake").
    func openPacket(upgrades: [String]) -> EnginePacket {
        let body: JSONValue = .object(JSONObject([
            ("sid", .string(id)),
            ("upgrades", .array(upgrades.map { .string($0) })),
            ("pingInterval", .int(Int64(configuration.pingInterval.wholeMilliseconds))),
            ("pingTimeout", .int(Int64(configuration.pingTimeout.wholeMilliseconds))),
            ("maxPayload", .int(Int64(configuration.maxPayload))),
        ]))
        return EnginePacket(.open, body.serializedString())
    }

    // MARK: sending

    /// Sends a `message` packet with text data.
    public func send(text: String) { send([EnginePacket.message(text)]) }

    /// Sends a binary `message` packet.
    public func send(binary: [UInt8]) { send([EnginePacket.binary(binary)]) }

    /// Sends packets in order, atomically with respect to other senders.
    public func send(_ packets: [EnginePacket]) {
        sendPreEncoded(packets.map(EnginePreEncodedPacket.init))
    }

    /// Sends packets encoded once for many recipients (broadcast). Returns false when the
    /// session is closed or was closed because its buffer bound was passed (slow consumer).
    /// `throughFaults` false: the fault queue's own flush, which must not be faulted again.
    @discardableResult
    public func sendPreEncoded(_ packets: [EnginePreEncodedPacket], throughFaults: Bool = true) -> Bool {
        var actions = Deferred()
        let ok: Bool = lock.withLock {
            if state.closed { return false }
            if throughFaults, let f = state.faults, let taken = faultedSendLocked(packets, f, into: &actions) { return taken }
            if state.transport == .websocket, let ws = state.ws {
                let frames = protocolVersion == 3 ? packets.map { webSocketFrame(forSegment: $0.segment) } : packets.map(\.frame)
                if state.pacing || state.pacedInFlight {
                    state.pacedQueue.append(contentsOf: frames)
                    if !state.pacedInFlight { nextPacedWriteLocked(ws, into: &actions) }
                    return true
                }
                for f in frames { actions.frames.append((ws, f)) }
                return true
            }
            guard state.queue.append(contentsOf: packets.map(\.segment)) else {
                closeLocked(reason: EngineCloseReason.slowConsumer, pollReply: nil, into: &actions)
                return false
            }
            flushPollLocked(into: &actions)
            return true
        }
        actions.run(self)
        return ok
    }

    /// The WebSocket this session writes to, when it is on the websocket transport
    /// (broadcast writes pre-encoded frames to it directly). Nil while set-up writes are paced,
    /// so a broadcast then queues behind them (`sendPreEncoded`), and nil while faults are
    /// injected, so a broadcast meets them there.
    var activeWebSocket: (any EngineWebSocketTransport)? {
        // v3 sessions frame binary messages differently: they take the per-session path.
        lock.withLock { state.closed || state.transport != .websocket || state.pacing || state.pacedInFlight || protocolVersion == 3 || state.faults != nil ? nil : state.ws }
    }

    // MARK: set-up pacing

    /// Runs `body` with websocket writes paced: every packet sent meanwhile (and any sent after
    /// it while they drain) leaves in its own write, after the previous one has been flushed.
    /// Used for the Socket.IO CONNECT reply and the connect handler's first emits, which the
    /// reference server never coalesces into one TCP segment. Other writes are not affected.
    /// Without `configuration.setupPacing` it only runs `body`.
    public func withPacedWrites<T>(_ body: () throws -> T) rethrows -> T {
        guard configuration.setupPacing != nil else { return try body() }
        lock.withLock { state.pacing = true }
        defer { lock.withLock { state.pacing = false } }
        return try body()
    }

    /// Writes a frame to the active websocket, behind any paced set-up frames still queued (a
    /// ping never overtakes the CONNECT reply's follow-ups). Lock held.
    func writeFrameLocked(_ frame: [UInt8], to ws: any EngineWebSocketTransport, into actions: inout Deferred) {
        if state.pacedInFlight {
            state.pacedQueue.append(frame)
        } else {
            actions.frames.append((ws, frame))
        }
    }

    /// Takes the next paced write (lock held): the first queued frame when none is in flight,
    /// else every queued frame as one write; leaves paced mode when nothing is queued.
    func nextPacedWriteLocked(_ ws: any EngineWebSocketTransport, into actions: inout Deferred) {
        guard !state.pacedQueue.isEmpty else {
            state.pacedInFlight = false
            state.pacedQueue = []
            return
        }
        if state.pacedInFlight {
            actions.pacedFrame = (ws, state.pacedQueue.reduce(into: []) { $0.append(contentsOf: $1) })
            state.pacedQueue = []
        } else {
            state.pacedInFlight = true
            actions.pacedFrame = (ws, state.pacedQueue.removeFirst())
        }
    }

    /// The previous paced frame was flushed: write the next one, or leave paced mode.
    func pacedWriteCompleted() {
        var actions = Deferred()
        lock.withLock {
            guard !state.closed, let ws = state.ws else {
                state.pacedInFlight = false
                state.pacedQueue = []
                return
            }
            nextPacedWriteLocked(ws, into: &actions)
        }
        actions.run(self)
    }

    /// The close reply still owed to the GET of the cycle the client closed (taken once).
    func takeCloseReply() -> [UInt8]? {
        lock.withLock {
            guard state.closed, let r = state.closeReplyForNextPoll else { return nil }
            state.closeReplyForNextPoll = nil
            return r
        }
    }

    /// Closes the session; the delegate's `sessionClosed` follows once.
    public func close(reason: String = EngineCloseReason.forcedClose) {
        var actions = Deferred()
        lock.withLock { closeLocked(reason: reason, pollReply: EnginePacket(.close), into: &actions) }
        actions.run(self)
    }

    // MARK: internals (lock held)

    /// Deferred side effects, run after the lock is released.
    struct Deferred {
        var frames: [(any EngineWebSocketTransport, [UInt8])] = []
        var texts: [(any EngineWebSocketTransport, String)] = []
        var resume: (CheckedContinuation<EnginePollOutcome, Never>, EnginePollOutcome)?
        var closeTransports: [any EngineWebSocketTransport] = []
        var delivered: [EnginePacket] = []
        var closedReason: String?
        var upgraded = false
        var rearm = false
        var pacedFrame: (any EngineWebSocketTransport, [UInt8])?

        func run(_ s: EngineIOSession) {
            for (ws, f) in frames { ws.engineSend(frame: f) }
            if let (ws, f) = pacedFrame {
                let gap = s.configuration.setupPacing?.gapNanoseconds ?? 0
                ws.engineSend(frame: f, thenAfter: gap) { s.pacedWriteCompleted() }
            }
            for (ws, t) in texts { ws.engineSend(text: t) }
            if let (c, o) = resume { c.resume(returning: o) }
            for ws in closeTransports { ws.engineClose() }
            if let server = s.server {
                for p in delivered {
                    switch p.data {
                    case .text(let t): server.deliverText(s, t)
                    case .binary(let b): server.deliverBinary(s, b)
                    }
                }
                if upgraded { server.sessionUpgraded(s) }
                if let r = closedReason { server.sessionDidClose(s, reason: r) }
            }
            if rearm { s.rearmTimer() }
        }
    }

    /// Packets as one polling payload in this session's protocol revision.
    func pollPayload(_ packets: [EnginePacket]) -> [UInt8] {
        guard protocolVersion == 3 else { return EnginePacketCodec.encodePayload(packets) }
        let segments = packets.map { p -> [UInt8] in
            var seg: [UInt8] = []
            EnginePacketCodec.encodeText(p, into: &seg)
            return seg
        }
        return EngineV3PayloadCodec.encodePayload(segments: segments, supportsBinary: supportsBinary).body
    }

    /// Empties the polling queue into one payload of this session's revision. Lock held.
    func drainPollLocked() -> [UInt8] {
        guard protocolVersion == 3 else { return state.queue.drainPayload() }
        return EngineV3PayloadCodec.encodePayload(segments: state.queue.drainSegments(), supportsBinary: supportsBinary).body
    }

    /// The WebSocket frame carrying a queued segment in this session's revision.
    func webSocketFrame(forSegment seg: [UInt8]) -> [UInt8] {
        protocolVersion == 3 ? EngineV3PayloadCodec.webSocketFrame(forSegment: seg) : EngineWebSocketFraming.frame(forSegment: seg)
    }

    func flushPollLocked(into actions: inout Deferred) {
        guard let cont = state.pendingPoll, !state.queue.isEmpty else { return }
        state.pendingPoll = nil
        actions.resume = (cont, .payload(drainPollLocked()))
    }

    /// `pollReply`: what a pending GET receives (`1` close for a server-side close, `6` noop
    /// when the client closed — as the reference server answers).
    /// `owesNextPoll`: the client closed over polling; with no GET parked, the next GET gets
    /// the reply (see `closeReplyForNextPoll`).
    func closeLocked(reason: String, pollReply: EnginePacket?, owesNextPoll: Bool = false, into actions: inout Deferred) {
        guard !state.closed else { return }
        state.closed = true
        state.pacedQueue = []
        let reply = pollPayload([pollReply ?? EnginePacket(.close)])
        if let cont = state.pendingPoll {
            state.pendingPoll = nil
            actions.resume = (cont, .payload(reply))
        } else if owesNextPoll {
            state.closeReplyForNextPoll = reply
        }
        if let ws = state.ws { actions.closeTransports.append(ws) }
        if let p = state.probe { actions.closeTransports.append(p) }
        state.ws = nil
        state.probe = nil
        shared.timers.cancel(self)
        state.timerDeadline = nil
        if state.polling != nil { _ = state.queue.drainSegments() }
        actions.closedReason = reason
    }

    /// Handles one decoded packet from the active transport (polling POST or websocket).
    func receiveLocked(_ packet: EnginePacket, viaWebSocket ws: (any EngineWebSocketTransport)?, into actions: inout Deferred) {
        switch packet.type {
        case .message:
            actions.delivered.append(packet)
        case .pong:
            state.heartbeat.pongReceived(now: clock.now())
            actions.rearm = true
        case .ping:
            // v3 clients ping and the server answers (Engine.IO v3 "Heartbeat"): each ping moves
            // the deadline. v4 clients do not ping (the server does); answer anyway.
            if protocolVersion == 3 {
                state.heartbeat.pingReceived(now: clock.now())
                actions.rearm = true
            }
            let pong = EnginePreEncodedPacket(EnginePacket(.pong, packet.text))
            if let ws { writeFrameLocked(pong.frame, to: ws, into: &actions) } else if state.queue.append(pong.segment) {
                flushPollLocked(into: &actions)
            }
        case .close:
            closeLocked(reason: EngineCloseReason.transportClose, pollReply: EnginePacket(.noop), owesNextPoll: ws == nil, into: &actions)
        case .open, .upgrade, .noop:
            break
        }
    }

    // MARK: timers

    /// Arms the single session timer at the heartbeat's next deadline (if it changed).
    func rearmTimer() {
        lock.withLock {
            guard !state.closed, !isSilencedLocked, let deadline = state.heartbeat.nextDeadline else { return }
            if state.timerDeadline == deadline { return }
            state.timerDeadline = deadline
            let hb = state.heartbeat
            let kind: EngineSessionTimers.Kind = deadline == hb.upgradeDeadline ? .upgrade
                : deadline == hb.pongDeadline ? (hb.clientPings ? .clientPing : .pong) : .ping
            // The timers hold the session strongly while armed: the timer is cancelled on close
            // (`closeLocked`) and replaced on rearm, which releases it.
            shared.timers.arm(self, at: deadline, kind: kind)
        }
    }

    /// Runs the pure heartbeat decision at the current time and acts on it.
    func timerFired() {
        var actions = Deferred()
        lock.withLock {
            state.timerDeadline = nil
            guard !state.closed else { return }
            let now = clock.now()
            loop: while true {
                switch state.heartbeat.tick(now: now) {
                case .none: break loop
                case .sendPing:
                    let ping = EnginePreEncodedPacket(EnginePacket(.ping))
                    if state.transport == .websocket, let ws = state.ws {
                        writeFrameLocked(ping.frame, to: ws, into: &actions)
                    } else if state.queue.append(ping.segment) {
                        flushPollLocked(into: &actions)
                    } else {
                        closeLocked(reason: EngineCloseReason.slowConsumer, pollReply: nil, into: &actions)
                        break loop
                    }
                case .pingTimeout:
                    closeLocked(reason: EngineCloseReason.pingTimeout, pollReply: nil, into: &actions)
                    break loop
                case .upgradeTimeout:
                    if let p = state.probe, state.upgrade != .done {
                        actions.closeTransports.append(p)
                        state.probe = nil
                        state.upgrade = .none
                    }
                }
            }
            actions.rearm = !state.closed
        }
        actions.run(self)
    }
}
