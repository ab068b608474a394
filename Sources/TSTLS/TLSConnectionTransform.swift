#if canImport(CTLS)
import Logging
import TSSockets

/// TLS for one `Connection` (the `ConnectionTransform` seam): runs a `TLSConnectionEngine` and
/// carries out its actions on the connection — ciphertext out, plaintext up to the handler.
/// Enforces the TLS limits (docs/tls.md): a total handshake deadline (a trickled ClientHello is cut off:
/// the deadline is set at accept and no byte extends it), the bounds of `TLSHandshakeGate` (per
/// address from accept, server-wide from the first byte), and a plain-HTTP request to the TLS
/// port closed with a log line.
/// Its mutable state belongs to the connection's loop (`EventLoopBound`): every method runs there
/// (seam calls, `whenClosed`, and the deadline task scheduled on that same loop); the @Sendable
/// closures only carry it to that loop.
public final class TLSConnectionTransform: ConnectionTransform, Sendable {
    private struct State {
        /// Made at the first byte received: until then a silent connection holds no TLS session.
        var engine: TLSConnectionEngine?
        var holdsGateSlot = true
        /// A server-wide slot is held (the first byte arrived).
        var started = false
        var deadline: ScheduledTaskHandle?
    }

    private let state: EventLoopBound<State>
    private let store: TLSContextStore
    private let gate: TLSHandshakeGate
    private let address: String
    private let refusals: RefusalLog

    /// The HTTP answer to a plain-HTTP request on the TLS port, sent before closing.
    static let plainHTTPResponse: [UInt8] = {
        let body = "This port speaks HTTPS: use an https:// URL.\n"
        return Array(("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
                      + "Connection: close\r\n\r\n" + body).utf8)
    }()

    private init(store: TLSContextStore, gate: TLSHandshakeGate, address: String, refusals: RefusalLog, loop: EventLoop) {
        self.state = EventLoopBound(State(), loop: loop)
        self.store = store
        self.gate = gate
        self.address = address
        self.refusals = refusals
    }

    /// The log of connections refused before or during the handshake (bounds, failed handshakes,
    /// deadline, plain HTTP): one line per interval with their count, not one each, so a client
    /// that opens and fails connections in a loop cannot flood the log.
    public static func makeRefusalLog(logger: Logger) -> RefusalLog {
        RefusalLog(subject: "TLS connections", logger: logger)
    }

    /// The factory for `TCPListener.makeTransform` / `HTTPServerConfiguration.connectionTransform`.
    /// `handshakeTimeout`: nanoseconds from accept to a finished handshake (0: none).
    /// `refusals`: where refused connections are counted (nil: a log of their own on the first
    /// connection's logger).
    public static func factory(store: TLSContextStore, gate: TLSHandshakeGate, handshakeTimeout: UInt64,
                               refusals: RefusalLog? = nil) -> ConnectionTransformFactory {
        let shared = LockedValue<RefusalLog?>(refusals)
        return { connection in
            let refusals = shared.withLock { log in
                if let log { return log }
                let made = makeRefusalLog(logger: connection.logger)
                log = made
                return made
            }
            let address = ConnectionAddressCap.host(of: connection.remoteAddress)
            guard gate.tryAdmit(address: address) else {
                refusals.record(address: address, reason: "\(gate.maxPerAddress) handshakes from that address already in progress (tls.maxHandshakesPerAddress)",
                                loop: connection.loop)
                connection.close(.local("too many TLS handshakes in progress from this address"))
                return nil
            }
            let transform = TLSConnectionTransform(store: store, gate: gate, address: address, refusals: refusals, loop: connection.loop)
            if handshakeTimeout > 0 {
                // Strong capture: cancelled when the handshake finishes or the connection closes.
                transform.state.value.deadline = connection.loop.scheduleTask(in: handshakeTimeout) {
                    transform.deadlinePassed(connection, timeout: handshakeTimeout)
                }
            }
            connection.whenClosed { _ in transform.finishHandshakeAccounting() }
            return transform
        }
    }

    /// At the first bytes: the server-wide slot and the TLS session. False when refused (closed).
    private func startHandshake(_ connection: Connection) -> Bool {
        guard gate.tryStart() else {
            refusals.record(address: address, reason: "\(gate.maxConcurrent) handshakes already in progress (tls.maxConcurrentHandshakes)", loop: connection.loop)
            connection.close(.local("too many TLS handshakes in progress"))
            return false
        }
        state.value.started = true
        do {
            state.value.engine = try TLSConnectionEngine(context: store.current)
            return true
        } catch {
            connection.logger.error("TLS connection refused: \(error)", metadata: ["connection": .stringConvertible(connection.id)])
            connection.close(.local("TLS set-up failed"))
            return false
        }
    }

    // MARK: ConnectionTransform

    public func connectionDidReceive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        if state.value.engine == nil {
            guard !state.value.started, startHandshake(connection) else { return }
        }
        guard let engine = state.value.engine else { return }
        perform(engine.receive(bytes), on: connection)
    }

    public func transformOutbound(_ connection: Connection, _ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        guard let engine = state.value.engine else { return [] }  // nothing to say before the client has spoken
        var out: [UInt8] = []
        for action in engine.encrypt(first, second) {
            switch action {
            case .send(let bytes): out += bytes
            case .failed(let why):
                connection.logger.notice("TLS write failed: \(why)", metadata: ["connection": .stringConvertible(connection.id)])
                connection.close(.protocolError("TLS: \(why)"))
                return []
            default: break
            }
        }
        return out
    }

    public func connectionWillCloseGracefully(_ connection: Connection) -> [UInt8] {
        guard let engine = state.value.engine else { return [] }
        var out: [UInt8] = []
        for case .send(let bytes) in engine.shutdown() { out += bytes }
        return out
    }

    // MARK: actions

    private func perform(_ actions: [TLSEngineAction], on connection: Connection) {
        for action in actions {
            switch action {
            case .send(let bytes):
                connection.writeBypassingTransform(bytes)
            case .deliver(let bytes):
                bytes.withUnsafeBytes { connection.deliverInbound($0) }
            case .handshakeCompleted(let summary):
                finishHandshakeAccounting()
                connection.logger.debug("TLS handshake completed: \(summary)",
                                        metadata: ["connection": .stringConvertible(connection.id), "remote": .string(connection.remoteAddress)])
            case .peerClosed:
                connection.closeGracefully(.peerClosed)
            case .plainHTTPDetected(let method):
                refusals.record(address: address, reason: "plain HTTP request (\(method)) sent to the TLS port: answered 400 and closed; the client must use https://",
                                loop: connection.loop)
                connection.writeBypassingTransform(Self.plainHTTPResponse)
                connection.closeGracefully(.protocolError("plain HTTP on the TLS port"))
            case .failed(let why):
                if state.value.engine?.isHandshakeComplete == true {
                    connection.logger.notice("TLS connection closed: \(why)",
                                             metadata: ["connection": .stringConvertible(connection.id), "remote": .string(connection.remoteAddress)])
                } else {
                    refusals.record(address: address, reason: "TLS connection closed: \(why)", loop: connection.loop)
                }
                connection.closeGracefully(.protocolError("TLS: \(why)"))
            }
        }
    }

    private func deadlinePassed(_ connection: Connection, timeout: UInt64) {
        state.value.deadline = nil
        guard state.value.engine?.isHandshakeComplete != true, connection.isOpen else { return }
        refusals.record(address: address, reason: "TLS handshake not finished within \(timeout / 1_000_000) ms of accept (tls.handshakeTimeout)",
                        loop: connection.loop)
        connection.close(.timeout)
    }

    /// Frees the handshake slot and the deadline, once (handshake done or connection closed).
    private func finishHandshakeAccounting() {
        let (deadline, releaseSlot, started) = state.withValue { s in
            defer { s.deadline = nil; s.holdsGateSlot = false }
            return (s.deadline, s.holdsGateSlot, s.started)
        }
        deadline?.cancel()
        if releaseSlot { gate.finish(address: address, started: started) }
    }
}
#endif
