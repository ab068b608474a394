// RFC 6455 §6 (sending and receiving data), §5.5 (control frames), §7 (closing the connection).
import TSSockets

/// One upgraded WebSocket connection (server side).
///
/// It is the `ConnectionHandler` installed on the TCP `Connection` after the 101 response: bytes
/// go through `WebSocketFrameDecoder` into `WebSocketStateMachine`, and this class performs the
/// resulting actions (deliver a message, answer a ping, send/echo a Close, drop the connection,
/// run the close timer on the loop's clock).
///
/// `@unchecked Sendable` invariant: all mutable state (decoder, state machine, delegate, timer,
/// flags) is only touched on `connection.loop`'s thread — the handler callbacks run there, and the
/// public `send…`/`close` methods hop there with `executeOrRun` before touching anything. The
/// only work done on the caller's thread is frame encoding, which touches no instance state.
public final class WebSocketConnection: ConnectionHandler, @unchecked Sendable {
    /// The underlying TCP connection. Don't write to it directly (it would corrupt the framing);
    /// it is exposed for its id, address, loop and `maxOutboundBytes`.
    public let connection: Connection
    public let configuration: WebSocketConfiguration

    /// Receives messages and the close event, on the loop thread. Set it in the `onUpgrade`
    /// callback (which runs on the loop before any frame is processed); messages arriving while
    /// it is nil are dropped. Held strongly until `webSocketDidClose` has been delivered, then
    /// released — so an application object can be owned by its connection without a retain
    /// cycle outliving the socket. Loop only.
    public var delegate: WebSocketDelegate?

    /// Why the TCP connection ended, once it has (e.g. `.slowConsumer` when the peer did not
    /// read fast enough and the outbound buffer passed `connection.maxOutboundBytes`). Set
    /// before `webSocketDidClose` when the TCP end is what closed the WebSocket. Loop only.
    public private(set) var transportCloseReason: CloseReason?

    private var inbound: WebSocketInbound
    private var closeTimer: ScheduledTaskHandle?
    private var closeReported = false
    /// When the frame now arriving started (nil between frames), and its deadline timer.
    private var frameStartedAt: UInt64?
    private var frameTimer: ScheduledTaskHandle?

    init(connection: Connection, configuration: WebSocketConfiguration) {
        self.connection = connection
        self.configuration = configuration
        self.inbound = WebSocketInbound(configuration: configuration)
    }

    public var connectionID: UInt64 { connection.id }
    public var loop: EventLoop { connection.loop }
    public var remoteAddress: String { connection.remoteAddress }

    /// Bytes queued for the peer but not yet accepted by the kernel. Loop only.
    public var outboundBufferedBytes: Int { connection.outboundBufferedBytes }

    /// True while messages can be sent (no Close sent or received yet). Loop only.
    public var isOpen: Bool { inbound.machine.state == .open }

    // MARK: Sending (thread-safe)

    /// Sends one text message (a single FIN frame). Dropped silently once closing.
    public func send(text: String) {
        sendFrameBytes(WebSocketFrameEncoder.encodeText(text))
    }

    /// Sends one binary message (a single FIN frame). Dropped silently once closing.
    public func send(binary: [UInt8]) {
        sendFrameBytes(WebSocketFrameEncoder.encodeBinary(binary))
    }

    /// Sends bytes that are already one or more complete, unmasked data frames — e.g. from
    /// `WebSocketFrameEncoder.encodeMessage(_:)`, encoded once and sent to many connections.
    /// Dropped silently once closing (§5.5.1: no data after our Close).
    public func sendFrameBytes(_ bytes: [UInt8]) {
        loop.executeOrRun { [self] in
            guard inbound.machine.state == .open else { return }
            connection.write(bytes)
        }
    }

    /// `sendFrameBytes` from the connection's loop (broadcasts already on it): writes now, with
    /// no closure per connection. Loop only.
    public func sendFrameBytesOnLoop(_ bytes: [UInt8]) {
        assert(loop.inEventLoop, "sendFrameBytesOnLoop must be called on the connection's loop")
        guard inbound.machine.state == .open else { return }
        connection.write(bytes)
    }

    /// Sends a Ping (§5.5.2); payload ≤ 125 bytes (longer payloads are truncated).
    public func sendPing(_ payload: [UInt8] = []) {
        let frame = WebSocketFrameEncoder.encode(opcode: .ping, payload: payload.prefix(125))
        sendFrameBytes(frame)
    }

    /// Starts the closing handshake (§7.1.2): sends Close(code, reason), then waits up to
    /// `configuration.closeTimeout` for the peer's Close before dropping TCP. Idempotent.
    public func close(code: UInt16 = WebSocketCloseCode.normalClosure, reason: String = "") {
        loop.executeOrRun { [self] in
            guard case .sendClose(let code, let reason) = inbound.machine.close(code: code, reason: reason) else { return }
            connection.write(WebSocketFrameEncoder.encodeClose(code: code, reason: reason))
            closeTimer = loop.scheduleTask(in: configuration.closeTimeoutNanoseconds) { [self] in
                // Runs on the loop.
                if inbound.machine.closeTimeoutElapsed() { connection.close(.timeout) }
            }
        }
    }

    /// Server shutdown: sends a Close frame with no status code after what is already queued
    /// (what the reference server's `ws` library sends for `close()` with no arguments,
    /// RFC 6455 §5.5.1: the body is optional), then closes TCP gracefully at once instead of
    /// waiting for the peer's Close (§7.1.1 lets the server close first; the peer reads the
    /// Close, then end of stream). The delegate is told now, with 1005 (§7.4.1: no status code
    /// was present) and `reason`, which stays local. Idempotent, thread-safe.
    public func goAway(reason: String = "") {
        loop.executeOrRun { [self] in
            if case .sendClose = inbound.machine.close(code: WebSocketCloseCode.noStatusReceived, reason: reason) {
                connection.write(WebSocketFrameEncoder.encodeClose(code: nil))
            }
            closeTimer?.cancel()
            closeTimer = nil
            connection.closeGracefully(.serverShutdown)
            reportClose(tcpReason: nil)
        }
    }

    // MARK: Upgrade

    /// Turns `connection` into a WebSocket after a 101 response has been written — for callers
    /// that build their own handshake response instead of using `WebSocketHandshake.response`.
    /// Loop only (call it from `HTTPResponse.upgrade`). `onUpgrade` runs before `leftover` (bytes
    /// that followed the request head) is processed, so set the delegate there.
    @discardableResult
    public static func upgrade(
        _ connection: Connection, leftover: [UInt8], configuration: WebSocketConfiguration,
        onUpgrade: (WebSocketConnection) -> Void
    ) -> WebSocketConnection {
        let ws = WebSocketConnection(connection: connection, configuration: configuration)
        ws.start(leftover: leftover, onUpgrade: onUpgrade)
        return ws
    }

    /// Installs this object as the connection's handler and processes bytes that arrived with
    /// the request head. Loop only; `onUpgrade` runs in between so the delegate is set first.
    func start(leftover: [UInt8], onUpgrade: (WebSocketConnection) -> Void) {
        connection.handler = self
        onUpgrade(self)
        if !leftover.isEmpty {
            let before = inbound.framesDecoded
            inbound.append(leftover)
            processInbound()
            updateFrameDeadline(newFrameStarted: inbound.framesDecoded != before)
        }
    }

    // MARK: ConnectionHandler (loop)

    public func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        guard inbound.machine.state != .closed else { return }
        let before = inbound.framesDecoded
        inbound.append(bytes)
        processInbound()
        updateFrameDeadline(newFrameStarted: inbound.framesDecoded != before)
    }

    public func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        transportCloseReason = reason
        closeTimer?.cancel()
        closeTimer = nil
        frameTimer?.cancel()
        frameTimer = nil
        let hadHandshake = inbound.machine.state == .closed && inbound.machine.closeCode != nil
        inbound.machine.connectionClosed()
        reportClose(tcpReason: hadHandshake ? nil : reason)
    }

    public func connectionWritabilityChanged(_ connection: Connection) {
        delegate?.webSocketWritabilityChanged(self)
    }

    // MARK: Private (loop)

    /// A total deadline per frame (RFC 6455 §10.4 leaves resource limits to the server): the
    /// clock starts at a frame's first byte — when bytes remain buffered after a read, they
    /// began in this read if a frame completed in it, else earlier — and is not reset by
    /// further bytes of the same frame.
    private func updateFrameDeadline(newFrameStarted: Bool) {
        guard inbound.machine.state != .closed, inbound.decoder.bufferedByteCount > 0 else {
            frameStartedAt = nil
            frameTimer?.cancel()
            frameTimer = nil
            return
        }
        guard frameStartedAt == nil || newFrameStarted else { return }
        let now = loop.clock.now()
        frameStartedAt = now
        frameTimer?.cancel()
        // Strong capture: cancelled on close, which releases the closure.
        frameTimer = loop.scheduleTask(in: configuration.frameReadTimeoutNanoseconds) { [self] in
            frameTimer = nil
            guard frameStartedAt == now, inbound.machine.state != .closed else { return }
            connection.logger.notice("websocket frame not received within \(configuration.frameReadTimeoutNanoseconds / 1_000_000) ms: closing with 1008",
                                          metadata: ["connection": .stringConvertible(connection.id), "remote": .string(connection.remoteAddress)])
            connection.write(WebSocketFrameEncoder.encodeClose(code: WebSocketCloseCode.policyViolation, reason: "frame read timeout"))
            connection.closeGracefully(.timeout)
            reportClose(tcpReason: .timeout)
        }
    }

    private func processInbound() {
        while let action = inbound.nextAction() { perform(action) }
    }

    private func perform(_ action: WebSocketStateMachine.Action) {
        switch action {
        case .none:
            break
        case .deliver(let message):
            delegate?.webSocket(self, didReceive: message)
        case .sendPong(let payload):
            connection.write(WebSocketFrameEncoder.encode(opcode: .pong, payload: payload))
        case .sendCloseAndDisconnect(let code, let reason):
            connection.write(WebSocketFrameEncoder.encodeClose(code: code, reason: reason))
            // Graceful: flush the Close, half-close, drain the peer briefly, then close — so the
            // peer reads our Close rather than a reset (§7.1.1: the server closes TCP first).
            connection.closeGracefully(.local("websocket closed"))
            reportClose(tcpReason: nil)
        case .disconnect:
            closeTimer?.cancel()
            closeTimer = nil
            connection.closeGracefully(.local("websocket closed"))
            reportClose(tcpReason: nil)
        }
    }

    /// Tells the delegate once, then releases it.
    private func reportClose(tcpReason: CloseReason?) {
        guard !closeReported else { return }
        closeReported = true
        let code = inbound.machine.closeCode
        let reason = tcpReason.map { $0.description } ?? inbound.machine.closeReason
        let delegate = self.delegate
        self.delegate = nil
        delegate?.webSocketDidClose(self, code: code, reason: reason)
    }
}
