import TSCrypto
import TSWebSocket

/// Engine.IO v4 error answers (`{"code":N,"message":"..."}` with HTTP 400, as the reference
/// server sends them).
public struct EngineHTTPError: Error, Sendable, Equatable {
    public let status: Int
    public let code: Int
    public let message: String

    public static let unknownTransport = EngineHTTPError(status: 400, code: 0, message: "Transport unknown")
    public static let unknownSID = EngineHTTPError(status: 400, code: 1, message: "Session ID unknown")
    public static let badHandshakeMethod = EngineHTTPError(status: 400, code: 2, message: "Bad handshake method")
    public static let badRequest = EngineHTTPError(status: 400, code: 3, message: "Bad request")
    public static let forbidden = EngineHTTPError(status: 403, code: 4, message: "Forbidden")
    public static let unsupportedProtocolVersion = EngineHTTPError(status: 400, code: 5, message: "Unsupported protocol version")
    public static let payloadTooLarge = EngineHTTPError(status: 413, code: 3, message: "Payload too large")
    /// Handshake refusals past the bounds on sessions without a Socket.IO CONNECT, in the shape the
    /// reference gives a handshake its `allowRequest` refuses (`{"code":4,"message":…}`, engine.io
    /// `lib/server.ts`, `verify` → `abortRequest`): 403 for the client's own address, 503 (with
    /// `Retry-After`) when the server as a whole is full, which is no fault of this client.
    public static let tooManyUnconnectedSessionsFromAddress = EngineHTTPError(
        status: 403, code: 4, message: "Too many sessions without a Socket.IO CONNECT from this address; send CONNECT after the handshake, or retry later")
    public static let tooManyUnconnectedSessions = EngineHTTPError(
        status: 503, code: 4, message: "Too many sessions without a Socket.IO CONNECT on this server; retry later")

    public var jsonBody: [UInt8] {
        var out: [UInt8] = Array("{\"code\":\(code),\"message\":".utf8)
        var msg: [UInt8] = []
        for c in message.utf8 { if c == 0x22 || c == 0x5C { msg.append(0x5C) }; msg.append(c) }
        out.append(0x22); out.append(contentsOf: msg); out.append(0x22); out.append(0x7D)
        return out
    }
}

/// WebSocket framing helpers (RFC 6455 §5.2 via TSWebSocket's encoder).
enum EngineWebSocketFraming {
    static func textFrame(_ utf8: [UInt8]) -> [UInt8] { WebSocketFrameEncoder.encode(opcode: .text, payload: utf8) }
    static func binaryFrame(_ bytes: [UInt8]) -> [UInt8] { WebSocketFrameEncoder.encode(opcode: .binary, payload: bytes) }

    /// Converts a polling-queue segment to the frame that carries the same packet.
    static func frame(forSegment seg: [UInt8]) -> [UInt8] {
        if seg.first == EnginePacketCodec.asciiB, let raw = Base64.decode(bytes: seg.dropFirst()) { return binaryFrame(raw) }
        return textFrame(seg)
    }
}

extension EngineIOSession {
    // MARK: HTTP long-polling (Engine.IO v4, "HTTP long-polling")

    /// A GET: answered at once, or parked until the machine answers it
    /// (`EngineIOSessionStateMachine.pollArrived`).
    func poll() async -> EnginePollOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (cont: CheckedContinuation<EnginePollOutcome, Never>) in
                let now = clock.now()
                let immediate: EnginePollOutcome? = perform { actions in
                    switch state.machine.pollArrived(now: now, into: &actions) {
                    case .answer(let outcome):
                        return outcome
                    case .park:
                        state.parkedPoll = cont
                        return nil
                    }
                }
                if let immediate { cont.resume(returning: immediate) }
            }
        } onCancel: {
            // The client went away while its GET was parked (reference: closes the session).
            self.close(reason: EngineCloseReason.pollCancelled)
        }
    }

    /// A POST: decodes the payload and handles each packet. Over `maxPayload` → 413 and the
    /// session closes; an undecodable payload → 400 and the session closes.
    func post(_ body: [UInt8]) -> EngineHTTPError? {
        // Decoded before the lock is taken (nothing else waits on this session while a large
        // payload is parsed); an oversized body is never parsed. The machine still answers in
        // the order the protocol checks.
        let tooLarge = body.count > configuration.maxPayload
        let decoded: [EnginePacket]? = tooLarge ? nil
            : try? (protocolVersion == 3 ? EngineV3PayloadCodec.decodePayload(body) : EnginePacketCodec.decodePayload(body))
        let now = clock.now()
        return perform { state.machine.post(decoded, tooLarge: tooLarge, now: now, into: &$0) }
    }

    // MARK: WebSocket (Engine.IO v4, "WebSocket" and "Upgrade")

    /// Sets the transport of a session opened directly over WebSocket and sends the open packet.
    func startWebSocket(_ ws: any EngineWebSocketTransport) {
        let open = EngineIOConfigurationOpen.text(openPacket(upgrades: []))
        lock.withLock { state.machine.webSocketAttached(ws) }
        ws.engineSend(text: open)
        rearmTimer()
    }

    /// The probing WebSocket of an upgrade in progress, if any.
    var probeTransport: (any EngineWebSocketTransport)? { lock.withLock { state.machine.probe } }

    /// Orders a polling request after what already arrived on the session's probing WebSocket
    /// (its `2probe`, `5`): a client sends those, then opens the request's connection, so a
    /// single-threaded server handles them first. Another loop runs the probe, so this request
    /// waits (suspended, not blocking) until that loop has read its socket once more.
    func awaitProbeInput() async {
        guard let probe = probeTransport else { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in probe.engineAfterPendingInput { c.resume() } }
    }

    /// Attaches the probing WebSocket of an upgrade; false (caller closes it) when not allowed.
    func attachProbe(_ ws: any EngineWebSocketTransport) -> Bool {
        let now = clock.now()
        let ok = lock.withLock { state.machine.probeAttached(ws, now: now) }
        if ok { rearmTimer() }
        return ok
    }

    /// A message from one of this session's WebSockets (active or probing).
    func webSocket(_ ws: any EngineWebSocketTransport, didReceive message: WebSocketMessage) {
        let decoded: EnginePacket?
        switch message {
        case .text(let t): decoded = try? EnginePacketCodec.decodeText(t)
        case .binary(let b):
            // v3: the first byte is the packet type (always `4`, message).
            if protocolVersion == 3 {
                decoded = b.first == EnginePacketType.message.rawValue ? .binary(Array(b.dropFirst())) : nil
            } else {
                decoded = EnginePacketCodec.decodeBinaryFrame(b)
            }
        }
        let now = clock.now()
        perform { state.machine.webSocketReceived(decoded, on: ws, now: now, into: &$0) }
    }

    /// One of this session's WebSockets closed.
    func webSocketDidClose(_ ws: any EngineWebSocketTransport, slowConsumer: Bool = false) {
        perform { state.machine.webSocketClosed(ws, slowConsumer: slowConsumer, into: &$0) }
    }
}

enum EngineIOConfigurationOpen {
    static func text(_ p: EnginePacket) -> String { EnginePacketCodec.encodeTextString(p) }
}
