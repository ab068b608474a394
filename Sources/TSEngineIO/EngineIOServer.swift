import Logging
import TSCrypto
import TSHTTP
import TSSockets

/// An Engine.IO v4 server (Engine.IO v4 protocol). Mount `handle(_:)` on the configured path
/// (`/socket.io/*`); it answers polling requests and upgrades WebSocket requests.
///
/// Thread-safety: `sessions`, `unconnected` and `delegate` are guarded by `lock`; each session guards its own
/// state (see `EngineIOSession`). Lock order: a session's lock may be held while taking none of
/// the server's; the server never calls into a session while holding `lock`.
// @unchecked Sendable: mutable state (`sessions`, the closed-session table, `unconnected`, `delegateRef`) is only touched under `lock`.
public final class EngineIOServer: @unchecked Sendable {
    public let configuration: EngineIOConfiguration
    public let clock: any MonotonicClock
    let logger: Logger
    /// Loop that runs session timers (heartbeat, upgrade timeout).
    public let timerLoop: EventLoop
    private let ownsTimerLoop: Bool

    private let lock = Mutex()
    private var sessions: [String: EngineIOSession] = [:]
    /// Sessions the client closed over polling whose outstanding GET has not come yet (sid →
    /// when, and the `6` it gets; see `EngineIOSession.poll`), kept for `pingTimeout` after the
    /// close and taken once. Pruned on every insert, so it holds at most the sessions closed
    /// within one pingTimeout.
    private var closedSessions: [String: (closedAt: UInt64, reply: [UInt8])] = [:]
    private var closedOrder: [(sid: String, closedAt: UInt64)] = []
    private var closedOrderStart = 0
    private weak var delegateRef: (any EngineIOServerDelegate)?
    /// Sessions the layer above has not taken yet, bounded per address and in total.
    private var unconnected: EngineUnconnectedSessions
    /// Handshakes refused past those bounds: one log line per interval with their count.
    let handshakeRefusals: RefusalLog

    /// - Parameter timerLoop: loop for session timers; nil creates a private one (its clock is
    ///   `clock`).
    public init(configuration: EngineIOConfiguration = EngineIOConfiguration(), clock: any MonotonicClock = SystemClock(),
                timerLoop: EventLoop? = nil, logger: Logger = Logger(label: "touchsync.engineio")) throws {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        unconnected = EngineUnconnectedSessions(maxTotal: configuration.maxUnconnectedSessions,
                                                maxPerAddress: configuration.maxUnconnectedSessionsPerAddress)
        handshakeRefusals = RefusalLog(subject: "Engine.IO handshakes", logger: logger, clock: clock)
        if let timerLoop {
            self.timerLoop = timerLoop
            ownsTimerLoop = false
        } else {
            self.timerLoop = try EventLoop(clock: clock, threadName: "ts-eio-timers")
            ownsTimerLoop = true
        }
        sessionContext = EngineIOSessionContext(configuration: configuration, clock: clock, timerLoop: self.timerLoop)
    }

    /// Configuration, clock and timer loop as every session holds them (one shared reference).
    let sessionContext: EngineIOSessionContext

    deinit {
        if ownsTimerLoop && !timerLoop.inEventLoop { timerLoop.shutdown() }
    }

    /// The delegate (held weakly). Set before serving requests.
    public var delegate: (any EngineIOServerDelegate)? {
        get { lock.withLock { delegateRef } }
        set { lock.withLock { delegateRef = newValue } }
    }

    var maxOutboundBytesPerWebSocket: Int { configuration.maxOutboundBytesPerWebSocket }

    public var sessionCount: Int { lock.withLock { sessions.count } }

    public func session(id: String) -> EngineIOSession? { lock.withLock { sessions[id] } }

    public var allSessions: [EngineIOSession] { lock.withLock { Array(sessions.values) } }

    /// Closes every session.
    public func closeAll(reason: String = EngineCloseReason.serverShutdown) {
        for s in allSessions { s.close(reason: reason) }
    }

    // MARK: sessions

    /// 120 random bits as 20 URL-safe base64 characters.
    static func newSessionID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let raw = SecureRandom.bytes(15)
        var out: [UInt8] = []
        out.reserveCapacity(20)
        var i = 0
        while i < 15 {
            let v = UInt32(raw[i]) << 16 | UInt32(raw[i + 1]) << 8 | UInt32(raw[i + 2])
            out.append(alphabet[Int(v >> 18 & 63)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)]); out.append(alphabet[Int(v & 63)])
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A new session, counted as not yet taken under `address`; `.failure` (nothing made) when
    /// `admit` is set and a bound on such sessions refuses it, saying which.
    func openSession(transport: EngineTransport, handshake: EngineHandshakeInfo, protocolVersion: Int = 4,
                     address: String, admit: Bool) -> Result<EngineIOSession, EngineUnconnectedSessions.Refusal> {
        let id = Self.newSessionID()
        let refused: EngineUnconnectedSessions.Refusal? = lock.withLock {
            if admit, let r = unconnected.refusal(for: address) {
                unconnected.countRefusal(r)
                return r
            }
            unconnected.insert(sid: id, address: address)
            return nil
        }
        if let refused { return .failure(refused) }
        let s = EngineIOSession(id: id, transport: transport, handshake: handshake,
                                shared: sessionContext, server: self,
                                protocolVersion: protocolVersion)
        lock.withLock { sessions[s.id] = s }
        return .success(s)
    }

    /// A new session, never refused (counted under `address`).
    func makeSession(transport: EngineTransport, handshake: EngineHandshakeInfo, protocolVersion: Int = 4, address: String = "") -> EngineIOSession {
        switch openSession(transport: transport, handshake: handshake, protocolVersion: protocolVersion, address: address, admit: false) {
        case .success(let s): return s
        case .failure: preconditionFailure("a session opened without admission is never refused")
        }
    }

    /// Why a handshake from `address` would be refused now (counted as refused), if it would.
    func refuseHandshake(from address: String) -> EngineUnconnectedSessions.Refusal? {
        lock.withLock {
            guard let r = unconnected.refusal(for: address) else { return nil }
            unconnected.countRefusal(r)
            return r
        }
    }

    /// The layer above has taken `session` (Socket.IO: its first namespace CONNECT succeeded): it
    /// no longer counts against `maxUnconnectedSessions`.
    public func sessionEstablished(_ session: EngineIOSession) {
        lock.withLock { _ = unconnected.remove(sid: session.id) }
    }

    /// Sessions not yet taken by the layer above, and handshakes refused past their bounds.
    public var unconnectedStats: (sessions: Int, refusedPerAddress: Int, refusedTotal: Int) {
        lock.withLock { (unconnected.count, unconnected.refusedPerAddress, unconnected.refusedTotal) }
    }

    /// Sessions of `address` not yet taken (tests).
    public func unconnectedSessions(address: String) -> Int { lock.withLock { unconnected.count(address: address) } }

    // MARK: callbacks from sessions (no session lock held)

    func deliverText(_ s: EngineIOSession, _ text: String) { delegate?.session(s, didReceiveText: text) }
    func deliverBinary(_ s: EngineIOSession, _ bytes: [UInt8]) { delegate?.session(s, didReceiveBinary: bytes) }
    func sessionUpgraded(_ s: EngineIOSession) { delegate?.sessionUpgraded(s) }

    func sessionDidClose(_ s: EngineIOSession, reason: String) {
        let reply = s.takeCloseReply()
        let now = clock.now()
        let keep = max(.milliseconds(1), configuration.pingTimeout).clockNanoseconds
        lock.withLock {
            _ = sessions.removeValue(forKey: s.id)
            unconnected.remove(sid: s.id)
            while closedOrderStart < closedOrder.count, now &- closedOrder[closedOrderStart].closedAt > keep {
                let old = closedOrder[closedOrderStart]
                if closedSessions[old.sid]?.closedAt == old.closedAt { closedSessions[old.sid] = nil }
                closedOrderStart += 1
            }
            if closedOrderStart > 1024 && closedOrderStart * 2 > closedOrder.count {
                closedOrder.removeFirst(closedOrderStart)
                closedOrderStart = 0
            }
            if let reply {
                closedSessions[s.id] = (now, reply)
                closedOrder.append((s.id, now))
            }
        }
        logger.debug("engine.io session closed", metadata: ["sid": "\(s.id)", "reason": "\(reason)"])
        delegate?.sessionClosed(s, reason: reason)
    }

    /// The `6` owed to the GET of a long-poll cycle the client closed, once.
    func takeClosedPollReply(sid: String) -> [UInt8]? {
        lock.withLock { closedSessions.removeValue(forKey: sid)?.reply }
    }

    func sessionDidOpen(_ s: EngineIOSession, request: HTTPRequest) {
        delegate?.sessionOpened(s, request: request)
    }
}
