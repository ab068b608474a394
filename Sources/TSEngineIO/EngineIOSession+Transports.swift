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

    /// A GET: answers at once with the queued packets, else waits until one is queued (the
    /// server's ping every `pingInterval` bounds the wait). A second concurrent GET closes the
    /// session: the first gets a `1` close packet, the second a 400.
    ///
    /// Order against requests on other connections (which other loops may run first): a GET
    /// racing the client's own close (`1` in a POST) gets the `6` it would have got parked
    /// (once; see `closeReplyForNextPoll`); a GET that comes after the ping deadline finds the
    /// session closed (400), even if the timer that closes it has not run yet.
    func poll() async -> EnginePollOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (cont: CheckedContinuation<EnginePollOutcome, Never>) in
                var actions = Deferred()
                var immediate: EnginePollOutcome?
                lock.withLock {
                    if !state.closed, state.heartbeat.isExpired(at: clock.now()) {
                        closeLocked(reason: EngineCloseReason.pingTimeout, pollReply: nil, into: &actions)
                    }
                    if state.closed {
                        if let reply = state.closeReplyForNextPoll {
                            state.closeReplyForNextPoll = nil
                            immediate = .payload(reply)
                        } else {
                            immediate = .error(.unknownSID)
                        }
                    } else if state.transport != .polling || state.upgrade == .done {
                        immediate = .error(.badRequest)
                    } else if state.pendingPoll != nil {
                        closeLocked(reason: EngineCloseReason.transportError, pollReply: EnginePacket(.close), into: &actions)
                        immediate = .error(.badRequest)
                    } else if !state.queue.isEmpty {
                        immediate = .payload(drainPollLocked())
                    } else if state.upgrade == .probed {
                        // Upgrade in progress: end this poll with a noop so the client can
                        // send its `5` (Engine.IO v4, "Upgrade").
                        immediate = .payload(pollPayload([EnginePacket(.noop)]))
                    } else {
                        state.pendingPoll = cont
                        state.pollGeneration &+= 1
                    }
                }
                if let immediate { cont.resume(returning: immediate) }
                actions.run(self)
            }
        } onCancel: {
            // The client went away while its GET was parked (reference: closes the session).
            self.close(reason: EngineCloseReason.pollCancelled)
        }
    }

    /// A POST: decodes the payload and handles each packet. Over `maxPayload` → 413 and the
    /// session closes; an undecodable payload → 400 and the session closes.
    func post(_ body: [UInt8]) -> EngineHTTPError? {
        var actions = Deferred()
        // Decoded before the lock is taken (nothing else waits on this session while a large
        // payload is parsed); an oversized body is never parsed. The checks below still run in
        // the order the protocol answers them.
        let tooLarge = body.count > configuration.maxPayload
        let decoded: [EnginePacket]? = tooLarge ? nil
            : try? (protocolVersion == 3 ? EngineV3PayloadCodec.decodePayload(body) : EnginePacketCodec.decodePayload(body))
        let result: EngineHTTPError? = lock.withLock {
            if !state.closed, state.heartbeat.isExpired(at: clock.now()) {
                closeLocked(reason: EngineCloseReason.pingTimeout, pollReply: nil, into: &actions)
            }
            if state.closed { return .unknownSID }
            if state.transport != .polling || state.upgrade == .done { return .badRequest }
            if tooLarge {
                closeLocked(reason: EngineCloseReason.payloadTooLarge, pollReply: nil, into: &actions)
                return .payloadTooLarge
            }
            guard let packets = decoded else {
                closeLocked(reason: EngineCloseReason.parseError, pollReply: nil, into: &actions)
                return .badRequest
            }
            for p in packets where !state.closed { receiveLocked(p, viaWebSocket: nil, into: &actions) }
            return nil
        }
        actions.run(self)
        return result
    }

    // MARK: WebSocket (Engine.IO v4, "WebSocket" and "Upgrade")

    /// Sets the transport of a session opened directly over WebSocket and sends the open packet.
    func startWebSocket(_ ws: any EngineWebSocketTransport) {
        let open = EngineIOConfigurationOpen.text(openPacket(upgrades: []))
        lock.withLock { state.ws = ws }
        ws.engineSend(text: open)
        rearmTimer()
    }

    /// The probing WebSocket of an upgrade in progress, if any.
    var probeTransport: (any EngineWebSocketTransport)? { lock.withLock { state.closed ? nil : state.probe } }

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
        let ok: Bool = lock.withLock {
            guard !state.closed, state.transport == .polling, state.upgrade == .none, state.probe == nil else { return false }
            state.probe = ws
            state.upgrade = .attached
            state.heartbeat.upgradeStarted(now: clock.now(), timeoutNanoseconds: max(.milliseconds(1), configuration.upgradeTimeout).clockNanoseconds)
            return true
        }
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
        var actions = Deferred()
        lock.withLock {
            guard !state.closed, !isSilencedLocked else { return }
            if let probe = state.probe, probe === ws {
                handleProbeLocked(decoded, probe: probe, into: &actions)
            } else if let active = state.ws, active === ws {
                guard let packet = decoded else {
                    closeLocked(reason: EngineCloseReason.parseError, pollReply: nil, into: &actions)
                    return
                }
                receiveLocked(packet, viaWebSocket: active, into: &actions)
            }
        }
        actions.run(self)
    }

    private func handleProbeLocked(_ packet: EnginePacket?, probe: any EngineWebSocketTransport, into actions: inout Deferred) {
        if let p = packet, p.type == .ping, p.text == "probe", state.upgrade == .attached {
            actions.texts.append((probe, "3probe"))
            state.upgrade = .probed
            if let cont = state.pendingPoll {
                state.pendingPoll = nil
                let payload = state.queue.isEmpty ? pollPayload([EnginePacket(.noop)]) : drainPollLocked()
                actions.resume = (cont, .payload(payload))
            }
        } else if let p = packet, p.type == .upgrade, state.upgrade == .probed {
            state.transport = .websocket
            state.ws = probe
            state.probe = nil
            state.upgrade = .done
            state.heartbeat.upgradeEnded()
            if let cont = state.pendingPoll {
                state.pendingPoll = nil
                actions.resume = (cont, .payload(pollPayload([EnginePacket(.noop)])))
            }
            for seg in state.queue.drainSegments() { actions.frames.append((probe, webSocketFrame(forSegment: seg))) }
            actions.upgraded = true
            actions.rearm = true
        } else {
            // Anything else on a probing transport aborts the upgrade (the session stays on polling).
            actions.closeTransports.append(probe)
            state.probe = nil
            state.upgrade = .none
            state.heartbeat.upgradeEnded()
        }
    }

    /// One of this session's WebSockets closed.
    func webSocketDidClose(_ ws: any EngineWebSocketTransport, slowConsumer: Bool = false) {
        var actions = Deferred()
        lock.withLock {
            if let probe = state.probe, probe === ws {
                state.probe = nil
                state.upgrade = .none
                state.heartbeat.upgradeEnded()
            } else if let active = state.ws, active === ws {
                state.ws = nil
                closeLocked(reason: slowConsumer ? EngineCloseReason.slowConsumer : EngineCloseReason.transportClose,
                            pollReply: nil, into: &actions)
            }
        }
        actions.run(self)
    }
}

enum EngineIOConfigurationOpen {
    static func text(_ p: EnginePacket) -> String { EnginePacketCodec.encodeTextString(p) }
}
