import TSWebSocket

extension EngineIOServer {
    /// Server shutdown: closes every session so its client learns it at once. `farewell` gives
    /// the packets the layer above sends each session last (Socket.IO's DISCONNECT); then a
    /// WebSocket gets a Close frame 1001 Going Away (RFC 6455 §7.4.1) and its TCP connection is
    /// closed without waiting for the peer's Close, and a pending long-poll GET is answered with
    /// the queued packets, the farewell and a `1` close packet (Engine.IO v4, "HTTP
    /// long-polling"). The delegate sees `reason`.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown,
                         farewell: (EngineIOSession) -> [EnginePreEncodedPacket] = { _ in [] }) {
        for s in allSessions { s.closeForShutdown(reason: reason, farewell: farewell(s)) }
    }
}

extension EngineIOSession {
    /// See `EngineIOServer.shutdown(reason:farewell:)`.
    func closeForShutdown(reason: String, farewell: [EnginePreEncodedPacket]) {
        var actions = Deferred()
        var transports: [any EngineWebSocketTransport] = []
        var frames: [UInt8] = []
        lock.withLock {
            guard !state.closed else { return }
            if state.transport == .websocket, state.ws != nil {
                for p in farewell { frames += p.frame }
            } else {
                var segments = state.queue.drainSegments()
                segments += farewell.map(\.segment)
                var close: [UInt8] = []
                EnginePacketCodec.encodeText(EnginePacket(.close), into: &close)
                segments.append(close)
                if let cont = state.pendingPoll {
                    state.pendingPoll = nil
                    actions.resume = (cont, .payload(EnginePacketCodec.joinPayload(segments)))
                }
            }
            // The WebSockets go away here (1001, no wait) instead of `closeLocked`'s 1000.
            if let ws = state.ws { transports.append(ws) }
            if let p = state.probe { transports.append(p) }
            state.ws = nil
            state.probe = nil
            closeLocked(reason: reason, pollReply: EnginePacket(.close), into: &actions)
        }
        for (i, ws) in transports.enumerated() {
            if i == 0 && !frames.isEmpty { ws.engineSend(frame: frames) }
            if let ws = ws as? WebSocketConnection {
                ws.goAway(reason: "server shutting down")
            } else {
                ws.engineClose()
            }
        }
        actions.run(self)
    }
}
