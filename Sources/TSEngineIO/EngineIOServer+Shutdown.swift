import TSWebSocket

extension EngineIOServer {
    /// Server shutdown: closes every session so its client learns it at once — a WebSocket
    /// gets what was already sent followed by a Close frame 1001 Going Away (RFC 6455 §7.4.1);
    /// a pending long-poll GET is answered with the packets still queued followed by a `1`
    /// close packet (Engine.IO v4, "HTTP long-polling"). The layer above queues its own
    /// goodbye first (Socket.IO's DISCONNECT). The delegate sees `reason`.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown) {
        for s in allSessions { s.closeForShutdown(reason: reason) }
    }
}

extension EngineIOSession {
    /// See `EngineIOServer.shutdown(reason:)`.
    func closeForShutdown(reason: String) {
        var actions = Deferred()
        var transports: [any EngineWebSocketTransport] = []
        lock.withLock {
            guard !state.closed else { return }
            if let cont = state.pendingPoll {
                state.pendingPoll = nil
                var segments = state.queue.drainSegments()
                var close: [UInt8] = []
                EnginePacketCodec.encodeText(EnginePacket(.close), into: &close)
                segments.append(close)
                actions.resume = (cont, .payload(EnginePacketCodec.joinPayload(segments)))
            }
            // Close the WebSockets here with 1001 instead of `closeLocked`'s 1000.
            if let ws = state.ws { transports.append(ws) }
            if let p = state.probe { transports.append(p) }
            state.ws = nil
            state.probe = nil
            closeLocked(reason: reason, pollReply: EnginePacket(.close), into: &actions)
        }
        for ws in transports {
            if let ws = ws as? WebSocketConnection {
                ws.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down")
            } else {
                ws.engineClose()
            }
        }
        actions.run(self)
    }
}
