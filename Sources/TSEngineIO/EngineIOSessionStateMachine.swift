/// One Engine.IO session's lifecycle (Engine.IO v4, "Session", "Transports", "Upgrade",
/// "Heartbeat"), as a value: every event (packets sent, a GET or POST, a WebSocket message or
/// close, a timer, a close or shutdown) appends what the session must do to an `Actions` value,
/// and `EngineIOSession` only carries them out after releasing its lock — the shape of
/// `ConnectionCloseStateMachine` and postgres-nio's `ConnectionStateMachine`. It owns the
/// polling queue and the heartbeat. Pure: no I/O, no clock (times come
/// with the events), no timers (it says when to arm one); tested event by event with byte
/// fixtures in `EngineIOSessionStateMachineTests`.
///
///     opening ──WebSocket attached──▶ websocket ◀──────────────────────────┐
///                                        │                                  │ `5` on the probe
///     polling(none) ──probe attached──▶ polling(attached) ──`2probe`──▶ polling(probed)
///        │      ▲            └─────────── anything else, probe closed, timeout ──┘
///        │      └───────────────────────────────────────────────────────┘
///        └─ every state ── close, `1`, ping timeout, bad bytes, slow consumer, shutdown ──▶ closed
///
/// A long-poll GET is parked (`pollParked`) until a packet is queued, the upgrade needs it
/// answered, or the session closes. How a close answers it depends on who closes: the server
/// (a kick, logout, timeout) answers `1`; the client's own `1` is answered `6`; a server
/// shutdown leaves it unanswered (`EnginePollOutcome.noAnswer`), as a process exit does, so
/// every client reconnects to the next process.
struct EngineIOSessionStateMachine {
    /// Where an upgrade from polling to WebSocket stands.
    enum Upgrade {
        case none
        /// A WebSocket connected for this session; its `2probe` is awaited.
        case attached(any EngineWebSocketTransport)
        /// `3probe` answered; the client's `5` is awaited (GETs are answered at once meanwhile).
        case probed(any EngineWebSocketTransport)
    }

    enum Phase {
        /// Opened over WebSocket; the WebSocket is attached right after (`webSocketAttached`).
        case opening
        /// On HTTP long-polling.
        case polling(Upgrade)
        /// On a WebSocket (opened on it or upgraded to it).
        case websocket(any EngineWebSocketTransport)
        /// Closed (final).
        case closed
    }

    /// How the transports are ended when the session closes.
    enum TransportEnding: Equatable {
        /// A WebSocket Close frame (1000), then the TCP close handshake.
        case closeFrame
        /// A Close frame without status and no wait for the peer's (server shutdown).
        case goAway
        /// The TCP connection ends with no Close frame: FIN, or RST when `reset` (test faults).
        case drop(reset: Bool)
    }

    /// What the session does once its lock is released, in this order: frames, texts, the poll answer, transport closes, deliveries, upgrade and close notices, rearm.
    struct Actions {
        var frames: [(any EngineWebSocketTransport, [UInt8])] = []
        var texts: [(any EngineWebSocketTransport, String)] = []
        /// The answer for the parked GET (which the machine has un-parked).
        var answerPoll: EnginePollOutcome?
        var closeTransports: [any EngineWebSocketTransport] = []
        var transportEnding = TransportEnding.closeFrame
        /// Inbound messages for the layer above, in order.
        var delivered: [EnginePacket] = []
        var upgraded = false
        /// The session closed for this reason: tell the server (once).
        var closedReason: String?
        /// Remove the session from the heartbeat timers.
        var cancelTimer = false
        /// Re-arm the heartbeat timer (`timerToArm`).
        var rearm = false

        init() {}
    }

    /// What only a polling session (or one upgrading from polling) uses, allocated on first use:
    /// a session opened over WebSocket never allocates it.
    final class PollingState {
        var queue: EnginePollingQueue
        var pollParked = false
        /// When the client closed over polling (`1` in a POST) and no GET was parked to receive
        /// the `6`, the GET of that long-poll cycle is still on its way (on another connection,
        /// handled by another loop): the next GET gets this `6` once; later ones get 400. So a
        /// close completes exactly one outstanding GET, whichever loop runs first.
        var closeReplyForNextPoll: [UInt8]?
        init(maxBytes: Int) { queue = EnginePollingQueue(maxBytes: maxBytes) }
    }

    private(set) var phase: Phase
    private var polling: PollingState?
    /// `maxBufferedPacketsBytes`, for the polling queue when it is created.
    let queueMaxBytes: Int
    /// 4, or 3 (`EIO=3`): length-prefixed polling payloads, binary WebSocket messages with their
    /// type byte, the client pings.
    let protocolVersion: Int
    /// v3 only: the client reads binary polling payloads (it did not ask for `b64=1`).
    let supportsBinary: Bool
    /// How long an attached probe may take to complete the upgrade.
    let upgradeTimeoutNanoseconds: UInt64
    private(set) var heartbeat: EngineHeartbeat
    /// Gone quiet (`mute`): no heartbeat, and WebSocket input is ignored.
    private(set) var muted = false
    /// The deadline the session's timer is armed for, if any.
    private var timerDeadline: UInt64?
    init(transport: EngineTransport, protocolVersion: Int, supportsBinary: Bool, queueMaxBytes: Int,
         heartbeat: EngineHeartbeat, upgradeTimeoutNanoseconds: UInt64) {
        phase = transport == .polling ? .polling(.none) : .opening
        self.protocolVersion = protocolVersion
        self.supportsBinary = supportsBinary
        self.queueMaxBytes = queueMaxBytes
        self.heartbeat = heartbeat
        self.upgradeTimeoutNanoseconds = upgradeTimeoutNanoseconds
    }

    // MARK: queries

    var isClosed: Bool { if case .closed = phase { return true } else { return false } }

    var transport: EngineTransport {
        switch phase {
        case .polling: return .polling
        case .opening, .websocket, .closed: return pollingOnly ? .polling : .websocket
        }
    }

    /// The session was opened over polling and never upgraded (for `transport` once closed).
    private var pollingOnly = false

    /// The WebSocket the session writes to, when on the websocket transport.
    var webSocket: (any EngineWebSocketTransport)? { if case .websocket(let ws) = phase { return ws } else { return nil } }

    /// The WebSocket of an upgrade in progress.
    var probe: (any EngineWebSocketTransport)? {
        switch phase {
        case .polling(.attached(let p)), .polling(.probed(let p)): return p
        default: return nil
        }
    }

    var hasParkedPoll: Bool { polling?.pollParked ?? false }

    var queueIsEmpty: Bool { polling?.queue.isEmpty ?? true }

    private mutating func pollingState() -> PollingState {
        if let p = polling { return p }
        let p = PollingState(maxBytes: queueMaxBytes)
        polling = p
        return p
    }

    // MARK: encoding (in this session's protocol revision)

    /// Packets as one polling payload.
    func pollPayload(_ packets: [EnginePacket]) -> [UInt8] {
        guard protocolVersion == 3 else { return EnginePacketCodec.encodePayload(packets) }
        let segments = packets.map { p -> [UInt8] in
            var seg: [UInt8] = []
            EnginePacketCodec.encodeText(p, into: &seg)
            return seg
        }
        return EngineV3PayloadCodec.encodePayload(segments: segments, supportsBinary: supportsBinary).body
    }

    /// Empties the polling queue into one payload.
    private mutating func drainPoll() -> [UInt8] {
        let p = pollingState()
        guard protocolVersion == 3 else { return p.queue.drainPayload() }
        return EngineV3PayloadCodec.encodePayload(segments: p.queue.drainSegments(), supportsBinary: supportsBinary).body
    }

    /// The WebSocket frame carrying a queued segment.
    func webSocketFrame(forSegment seg: [UInt8]) -> [UInt8] {
        protocolVersion == 3 ? EngineV3PayloadCodec.webSocketFrame(forSegment: seg) : EngineWebSocketFraming.frame(forSegment: seg)
    }

    // MARK: sending

    /// Packets from the layer above. False when closed, or when the polling backlog passed its
    /// bound (the session then closes as a slow consumer).
    mutating func send(_ packets: [EnginePreEncodedPacket], into actions: inout Actions) -> Bool {
        switch phase {
        case .closed:
            return false
        case .websocket(let ws):
            for p in packets { actions.frames.append((ws, frame(p))) }
            return true
        case .opening, .polling:
            // While a probe is attached, sends keep going to the queue (polling); on the
            // client's `5` the queue is flushed over the new WebSocket, so order survives the
            // switch.
            guard pollingState().queue.append(contentsOf: packets.map(\.segment)) else {
                close(reason: EngineCloseReason.slowConsumer, pollReply: nil, into: &actions)
                return false
            }
            flushPoll(into: &actions)
            return true
        }
    }

    private func frame(_ p: EnginePreEncodedPacket) -> [UInt8] {
        protocolVersion == 3 ? webSocketFrame(forSegment: p.segment) : p.frame
    }

    /// An Engine.IO control packet (ping, pong) on the active transport.
    private mutating func sendControl(_ packet: EnginePreEncodedPacket, into actions: inout Actions) -> Bool {
        if case .websocket(let ws) = phase {
            actions.frames.append((ws, packet.frame))
            return true
        }
        guard pollingState().queue.append(packet.segment) else { return false }
        flushPoll(into: &actions)
        return true
    }

    /// Answers the parked GET with everything queued, if both exist.
    private mutating func flushPoll(into actions: inout Actions) {
        guard let p = polling, p.pollParked, !p.queue.isEmpty else { return }
        p.pollParked = false
        actions.answerPoll = .payload(drainPoll())
    }

    // MARK: closing

    /// Closes the session (once). `pollReply`: what a parked GET receives (`1` for a close by the
    /// server, the default; `6` when the client closed — as the reference answers); nil
    /// `pollReply` with `answerParkedPoll` false leaves it for the caller. `owesNextPoll`: the
    /// client closed over polling with no GET parked; the next GET gets the reply
    /// (`closeReplyForNextPoll`).
    mutating func close(reason: String, pollReply: EnginePacket?, owesNextPoll: Bool = false,
                        ending: TransportEnding = .closeFrame, parkedPollAnswer: EnginePollOutcome? = nil,
                        into actions: inout Actions) {
        let transports: [any EngineWebSocketTransport]
        switch phase {
        case .closed: return
        case .opening: transports = []
        case .websocket(let ws): transports = [ws]
        case .polling(.none):
            transports = []
            pollingOnly = true
        case .polling(.attached(let p)), .polling(.probed(let p)):
            transports = [p]
            pollingOnly = true
        }
        phase = .closed
        if let p = owesNextPoll ? pollingState() : polling {
            if p.pollParked {
                p.pollParked = false
                actions.answerPoll = parkedPollAnswer ?? .payload(pollPayload([pollReply ?? EnginePacket(.close)]))
            } else if owesNextPoll {
                p.closeReplyForNextPoll = pollPayload([pollReply ?? EnginePacket(.close)])
            }
            _ = p.queue.drainSegments()
        }
        actions.closeTransports.append(contentsOf: transports)
        actions.transportEnding = ending
        actions.cancelTimer = true
        timerDeadline = nil
        actions.closedReason = reason
    }

    /// Server shutdown: a parked GET is left unanswered (its connection closes, as a process exit
    /// closes it) and WebSockets get a Close frame without waiting; nothing is sent at the layers
    /// above. See `EngineIOServer.shutdown(reason:)`.
    mutating func shutdown(reason: String, into actions: inout Actions) {
        close(reason: reason, pollReply: nil, ending: .goAway, parkedPollAnswer: .noAnswer, into: &actions)
    }

    /// The close reply still owed to the GET of the cycle the client closed (taken once).
    mutating func takeCloseReply() -> [UInt8]? {
        guard isClosed, let p = polling, let r = p.closeReplyForNextPoll else { return nil }
        p.closeReplyForNextPoll = nil
        return r
    }

    /// Closes when the heartbeat deadline has passed even if the timer has not run yet (a
    /// request on another loop may come first).
    private mutating func closeIfExpired(now: UInt64, into actions: inout Actions) {
        if !isClosed, heartbeat.isExpired(at: now) {
            close(reason: EngineCloseReason.pingTimeout, pollReply: nil, into: &actions)
        }
    }

    // MARK: inbound packets

    /// One decoded packet from the active transport (a polling POST, or `ws`).
    private mutating func receive(_ packet: EnginePacket, viaWebSocket ws: (any EngineWebSocketTransport)?, now: UInt64,
                                  into actions: inout Actions) {
        switch packet.type {
        case .message:
            actions.delivered.append(packet)
        case .pong:
            heartbeat.pongReceived(now: now)
            actions.rearm = true
        case .ping:
            // v3 clients ping and the server answers (Engine.IO v3 "Heartbeat"): each ping moves
            // the deadline. v4 clients do not ping (the server does); answer anyway.
            if protocolVersion == 3 {
                heartbeat.pingReceived(now: now)
                actions.rearm = true
            }
            _ = sendControl(EnginePreEncodedPacket(EnginePacket(.pong, packet.text)), into: &actions)
        case .close:
            close(reason: EngineCloseReason.transportClose, pollReply: EnginePacket(.noop), owesNextPoll: ws == nil, into: &actions)
        case .open, .upgrade, .noop:
            break
        }
    }

    // MARK: timers

    /// The deadline and list the session's timer must be armed at, when it changed (recorded as
    /// armed); nil when nothing is to arm.
    mutating func timerToArm() -> (deadline: UInt64, kind: EngineSessionTimers.Kind)? {
        guard !isClosed, !muted, let deadline = heartbeat.nextDeadline, timerDeadline != deadline else { return nil }
        timerDeadline = deadline
        let kind: EngineSessionTimers.Kind = deadline == heartbeat.upgradeDeadline ? .upgrade
            : deadline == heartbeat.pongDeadline ? (heartbeat.clientPings ? .clientPing : .pong) : .ping
        return (deadline, kind)
    }

    /// The session goes quiet, as a peer that vanished looks from the other side: no more pings
    /// (the session's timer must be cancelled), WebSocket input ignored. What ends it is a close
    /// (test mode's "ping timeout" fault closes it after the client's own timeout).
    mutating func mute() {
        muted = true
        timerDeadline = nil
    }

    /// The heartbeat timer fired.
    mutating func timerFired(now: UInt64, into actions: inout Actions) {
        timerDeadline = nil
        guard !isClosed, !muted else { return }
        loop: while true {
            switch heartbeat.tick(now: now) {
            case .none: break loop
            case .sendPing:
                guard sendControl(EnginePreEncodedPacket(EnginePacket(.ping)), into: &actions) else {
                    close(reason: EngineCloseReason.slowConsumer, pollReply: nil, into: &actions)
                    break loop
                }
            case .pingTimeout:
                close(reason: EngineCloseReason.pingTimeout, pollReply: nil, into: &actions)
                break loop
            case .upgradeTimeout:
                if let p = probe {
                    actions.closeTransports.append(p)
                    phase = .polling(.none)
                }
            }
        }
        actions.rearm = !isClosed
    }
}

// MARK: - Transport events

/// The transport events of `EngineIOSessionStateMachine`: long-polling GETs and POSTs
/// (Engine.IO v4, "HTTP long-polling"), the WebSocket of a session opened on one, and the probe
/// of an upgrade (Engine.IO v4, "Upgrade").
extension EngineIOSessionStateMachine {
    /// What a GET gets.
    enum PollArrival {
        /// This answer, now.
        case answer(EnginePollOutcome)
        /// Nothing yet: the GET is parked until `actions.answerPoll` carries its answer.
        case park
    }

    // MARK: HTTP long-polling

    /// A GET: answered at once with the queued packets, else parked until one is queued (the
    /// server's ping every `pingInterval` bounds the wait). A second concurrent GET closes the
    /// session: the first gets a `1`, the second a 400.
    ///
    /// Order against requests on other connections (which other loops may run first): a GET
    /// racing the client's own close (`1` in a POST) gets the `6` it would have got parked
    /// (once; `closeReplyForNextPoll`); a GET after the ping deadline finds the session closed
    /// (400), even if the timer that closes it has not run yet.
    mutating func pollArrived(now: UInt64, into actions: inout Actions) -> PollArrival {
        closeIfExpired(now: now, into: &actions)
        switch phase {
        case .closed:
            if let reply = takeCloseReply() { return .answer(.payload(reply)) }
            return .answer(.error(.unknownSID))
        case .opening, .websocket:
            return .answer(.error(.badRequest))
        case .polling(let upgrade):
            let p = pollingState()
            if p.pollParked {
                close(reason: EngineCloseReason.transportError, pollReply: EnginePacket(.close), into: &actions)
                return .answer(.error(.badRequest))
            }
            if !p.queue.isEmpty { return .answer(.payload(drainPoll())) }
            if case .probed = upgrade {
                // Upgrade in progress: end this poll with a noop so the client can send its `5`
                // (Engine.IO v4, "Upgrade").
                return .answer(.payload(pollPayload([EnginePacket(.noop)])))
            }
            p.pollParked = true
            return .park
        }
    }

    /// A POST's payload: `decoded` nil when it did not decode, `tooLarge` when over `maxPayload`
    /// (not decoded). Returns the error to answer, nil for 200 `ok`.
    mutating func post(_ decoded: [EnginePacket]?, tooLarge: Bool, now: UInt64, into actions: inout Actions) -> EngineHTTPError? {
        closeIfExpired(now: now, into: &actions)
        switch phase {
        case .closed: return .unknownSID
        case .opening, .websocket: return .badRequest
        case .polling: break
        }
        if tooLarge {
            close(reason: EngineCloseReason.payloadTooLarge, pollReply: nil, into: &actions)
            return .payloadTooLarge
        }
        guard let packets = decoded else {
            close(reason: EngineCloseReason.parseError, pollReply: nil, into: &actions)
            return .badRequest
        }
        for p in packets where !isClosed { receive(p, viaWebSocket: nil, now: now, into: &actions) }
        return nil
    }

    // MARK: WebSocket

    /// The WebSocket of a session opened on one is attached (its open packet is written next).
    mutating func webSocketAttached(_ ws: any EngineWebSocketTransport) {
        guard case .opening = phase else { return }
        phase = .websocket(ws)
    }

    /// A WebSocket connected to upgrade this polling session; false (the caller closes it) when
    /// no upgrade may start now.
    mutating func probeAttached(_ ws: any EngineWebSocketTransport, now: UInt64) -> Bool {
        guard case .polling(.none) = phase else { return false }
        phase = .polling(.attached(ws))
        heartbeat.upgradeStarted(now: now, timeoutNanoseconds: upgradeTimeoutNanoseconds)
        return true
    }

    /// A message from one of this session's WebSockets: `packet` nil when it did not decode.
    mutating func webSocketReceived(_ packet: EnginePacket?, on ws: any EngineWebSocketTransport, now: UInt64,
                                    into actions: inout Actions) {
        if muted { return }
        switch phase {
        case .websocket(let active) where active === ws:
            guard let packet else {
                close(reason: EngineCloseReason.parseError, pollReply: nil, into: &actions)
                return
            }
            receive(packet, viaWebSocket: active, now: now, into: &actions)
        case .polling(.attached(let probe)) where probe === ws:
            if let p = packet, p.type == .ping, p.text == "probe" {
                actions.texts.append((probe, "3probe"))
                phase = .polling(.probed(probe))
                if let state = polling, state.pollParked {
                    state.pollParked = false
                    actions.answerPoll = .payload(state.queue.isEmpty ? pollPayload([EnginePacket(.noop)]) : drainPoll())
                }
            } else {
                abortUpgrade(probe, into: &actions)
            }
        case .polling(.probed(let probe)) where probe === ws:
            guard let p = packet, p.type == .upgrade else { return abortUpgrade(probe, into: &actions) }
            phase = .websocket(probe)
            heartbeat.upgradeEnded()
            if let state = polling {
                if state.pollParked {
                    state.pollParked = false
                    actions.answerPoll = .payload(pollPayload([EnginePacket(.noop)]))
                }
                for seg in state.queue.drainSegments() { actions.frames.append((probe, webSocketFrame(forSegment: seg))) }
            }
            actions.upgraded = true
            actions.rearm = true
        default:
            break
        }
    }

    /// Anything but the expected packet on a probing WebSocket aborts the upgrade: the probe is
    /// closed, the session stays on polling.
    private mutating func abortUpgrade(_ probe: any EngineWebSocketTransport, into actions: inout Actions) {
        actions.closeTransports.append(probe)
        phase = .polling(.none)
        heartbeat.upgradeEnded()
    }

    /// One of this session's WebSockets closed: the probe (the upgrade ends, the session stays on
    /// polling) or the active one (the session closes).
    mutating func webSocketClosed(_ ws: any EngineWebSocketTransport, slowConsumer: Bool, into actions: inout Actions) {
        switch phase {
        case .polling(.attached(let probe)) where probe === ws, .polling(.probed(let probe)) where probe === ws:
            phase = .polling(.none)
            heartbeat.upgradeEnded()
        case .websocket(let active) where active === ws:
            // Already gone: nothing to close.
            phase = .opening
            close(reason: slowConsumer ? EngineCloseReason.slowConsumer : EngineCloseReason.transportClose, pollReply: nil, into: &actions)
        default:
            break
        }
    }

    /// The transports are cut (test faults): a WebSocket without a Close frame (FIN, or RST when
    /// `reset`), a parked GET answered 400.
    mutating func dropTransport(reset: Bool, into actions: inout Actions) {
        close(reason: reset ? EngineCloseReason.transportError : EngineCloseReason.transportClose, pollReply: nil,
              ending: .drop(reset: reset), parkedPollAnswer: .error(.unknownSID), into: &actions)
    }
}
