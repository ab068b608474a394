import Logging
import TSJSON
import TSSockets
import TSWebSocket

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
    /// A Close frame without status code, and the TCP connection closed without waiting for the
    /// peer's Close (server shutdown).
    func engineGoAway()
    /// The TCP connection ends with no Close frame: a FIN, or a reset when `reset` (test faults).
    func engineDrop(reset: Bool)
    /// Calls `body` once this WebSocket's loop has taken in (and handled) what had already
    /// arrived on it: after a later loop iteration, which polls the socket again.
    func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void)
    /// The event loop that owns this WebSocket's connection (broadcasts group recipients by it).
    var loop: EventLoop { get }
    /// Appends complete frame bytes to the outbound queue; only on `loop` (a broadcast has
    /// already hopped there once for all of that loop's recipients).
    func sendFrameBytesOnLoop(_ bytes: [UInt8])
}

/// A stage installed around one session's outbound packets from outside the session (test mode's
/// faults, `EngineSessionFaults`): while installed, what the layer above sends goes to it
/// instead of the transport, and it hands on what it lets through with `sendDirect`. A session
/// drops its stage when it closes.
protocol EngineOutboundStage: AnyObject, Sendable {
    /// Packets the layer above sent (called without the session's lock); returns whether the
    /// session took them.
    func send(_ packets: [EnginePreEncodedPacket], through session: EngineIOSession) -> Bool
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
/// Every decision is `EngineIOSessionStateMachine`'s; this class holds it behind `lock` and
/// carries out the actions it returns. Network writes, continuation resumes and delegate calls
/// happen after the lock is released, so a callback may call back into the session without
/// deadlocking.
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
    /// Configuration, clock and timer loop, shared by every session of the server (one
    /// reference per session instead of a copy of each).
    let shared: EngineIOSessionContext
    var configuration: EngineIOConfiguration { shared.configuration }
    var clock: any MonotonicClock { shared.clock }
    var timerLoop: EventLoop { shared.timerLoop }
    weak var server: EngineIOServer?

    struct State {
        var machine: EngineIOSessionStateMachine
        /// The GET the machine has parked (`hasParkedPoll`), resumed with its `answerPoll`.
        var parkedPoll: CheckedContinuation<EnginePollOutcome, Never>?
        /// `userInfo` (kept under the session lock: no lock object of its own per session).
        var userInfo: (any AnyObject & Sendable)?
        /// The stage installed around the outbound packets, nil when none (always, outside test
        /// mode).
        var outboundStage: (any EngineOutboundStage)?
    }

    /// Guards `state`, and only this session's state: the layer above keeps its own lock for its
    /// own per-connection state (Socket.IO's `SocketIOClient`). The session calls nothing outside
    /// while holding it: writes, resumes and delegate calls run after release (`Actions`), and
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
        self.shared = shared
        self.server = server
        let heartbeat = EngineHeartbeat(now: shared.clock.now(),
                                        pingIntervalNanoseconds: max(.milliseconds(1), configuration.pingInterval).clockNanoseconds,
                                        pingTimeoutNanoseconds: max(.milliseconds(1), configuration.pingTimeout).clockNanoseconds,
                                        clientPings: protocolVersion == 3)
        state = State(machine: EngineIOSessionStateMachine(
            transport: transport, protocolVersion: protocolVersion, supportsBinary: handshake.query["b64"] == nil,
            queueMaxBytes: configuration.maxBufferedPacketsBytes, heartbeat: heartbeat,
            upgradeTimeoutNanoseconds: max(.milliseconds(1), configuration.upgradeTimeout).clockNanoseconds))
    }

    public var transport: EngineTransport { lock.withLock { state.machine.transport } }
    public var isClosed: Bool { lock.withLock { state.machine.isClosed } }

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

    typealias Actions = EngineIOSessionStateMachine.Actions

    /// Packets as one polling payload in this session's protocol revision (pure; no lock needed:
    /// only immutable fields of the machine are read).
    func pollPayload(_ packets: [EnginePacket]) -> [UInt8] {
        lock.withLock { state.machine.pollPayload(packets) }
    }

    /// Runs `event` (which feeds the machine) under the lock, then carries out the actions it
    /// collected. The parked GET a poll answer is for is taken in the same critical section, so
    /// a GET parked right after the lock is released is never answered in its place.
    @inline(__always)
    func perform<T>(_ event: (inout Actions) -> T) -> T {
        var actions = Actions()
        var parked: CheckedContinuation<EnginePollOutcome, Never>?
        let result: T = lock.withLock {
            let r = event(&actions)
            if actions.closedReason != nil { state.outboundStage = nil }
            if actions.answerPoll != nil {
                parked = state.parkedPoll
                state.parkedPoll = nil
            }
            return r
        }
        run(actions, answering: parked)
        return result
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
    @discardableResult
    public func sendPreEncoded(_ packets: [EnginePreEncodedPacket]) -> Bool {
        var stage: (any EngineOutboundStage)?
        let ok: Bool = perform { actions in
            if let s = state.outboundStage {
                stage = s
                return true
            }
            return state.machine.send(packets, into: &actions)
        }
        guard let stage else { return ok }
        return stage.send(packets, through: self)
    }

    /// Sends packets past the outbound stage (what the stage lets through).
    @discardableResult
    func sendDirect(_ packets: [EnginePreEncodedPacket]) -> Bool {
        perform { state.machine.send(packets, into: &$0) }
    }

    /// The WebSocket this session writes to, when it is on the websocket transport
    /// (broadcast writes pre-encoded frames to it directly). Nil while an outbound stage is
    /// installed, so a broadcast meets it there.
    var activeWebSocket: (any EngineWebSocketTransport)? {
        // v3 sessions frame binary messages differently: they take the per-session path.
        lock.withLock { protocolVersion == 3 || state.outboundStage != nil ? nil : state.machine.webSocket }
    }

    // MARK: closing

    /// The close reply still owed to the GET of the cycle the client closed (taken once).
    func takeCloseReply() -> [UInt8]? {
        lock.withLock { state.machine.takeCloseReply() }
    }

    /// Closes the session; the delegate's `sessionClosed` follows once.
    public func close(reason: String = EngineCloseReason.forcedClose) {
        perform { state.machine.close(reason: reason, pollReply: EnginePacket(.close), into: &$0) }
    }

    // MARK: carrying out actions

    /// Carries out what the machine decided, after the lock is released.
    private func run(_ a: Actions, answering parked: CheckedContinuation<EnginePollOutcome, Never>?) {
        for (ws, f) in a.frames { ws.engineSend(frame: f) }
        for (ws, t) in a.texts { ws.engineSend(text: t) }
        if let outcome = a.answerPoll { parked?.resume(returning: outcome) }
        if !a.closeTransports.isEmpty { end(a.closeTransports, a.transportEnding) }
        if a.cancelTimer { shared.timers.cancel(self) }
        if let server {
            for p in a.delivered {
                switch p.data {
                case .text(let t): server.deliverText(self, t)
                case .binary(let b): server.deliverBinary(self, b)
                }
            }
            if a.upgraded { server.sessionUpgraded(self) }
            if let r = a.closedReason { server.sessionDidClose(self, reason: r) }
        }
        if a.rearm { rearmTimer() }
    }

    private func end(_ transports: [any EngineWebSocketTransport], _ ending: EngineIOSessionStateMachine.TransportEnding) {
        for ws in transports {
            switch ending {
            case .closeFrame:
                ws.engineClose()
            case .goAway: ws.engineGoAway()
            case .drop(let reset): ws.engineDrop(reset: reset)
            }
        }
    }

    // MARK: timers

    /// Arms the single session timer at the heartbeat's next deadline (if it changed).
    func rearmTimer() {
        lock.withLock {
            guard let (deadline, kind) = state.machine.timerToArm() else { return }
            // The timers hold the session strongly while armed: the timer is cancelled on close
            // and replaced on rearm, which releases it.
            shared.timers.arm(self, at: deadline, kind: kind)
        }
    }

    /// Runs the pure heartbeat decision at the current time and acts on it.
    func timerFired() {
        let now = clock.now()
        perform { state.machine.timerFired(now: now, into: &$0) }
    }
}
