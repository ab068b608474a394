import TSWebSocket

extension EngineIOServer {
    /// Server shutdown: closes every session at once so its client learns it, as the reference
    /// server's `close()` does (engine.io `packages/engine.io/lib/server.ts` → `Socket.close(true)`,
    /// which closes the transport without waiting for the write buffer to drain):
    /// - a WebSocket gets a Close frame with no status code (engine.io's websocket transport
    ///   calls `ws.close()` with no arguments) and its TCP connection is closed without waiting
    ///   for the peer's Close (`WebSocketConnection.goAway`);
    /// - a pending long-poll GET is answered with a `1` close packet alone (engine.io's polling
    ///   transport, `doClose` when writable; a parked GET never has packets waiting behind it,
    ///   they would have answered it).
    /// Nothing is sent at the layers above. The delegate sees `reason`.
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
            // A pending GET gets `1` from `closeLocked`, in the session's protocol revision.
            // The WebSockets close here (no status code, no wait) instead of `closeLocked`'s 1000.
            if let ws = state.ws { transports.append(ws) }
            if let p = state.probe { transports.append(p) }
            state.ws = nil
            state.probe = nil
            closeLocked(reason: reason, pollReply: EnginePacket(.close), into: &actions)
        }
        for ws in transports {
            if let ws = ws as? WebSocketConnection {
                ws.goAway(reason: "server shutting down")
            } else {
                ws.engineClose()
            }
        }
        actions.run(self)
    }
}

extension EngineIOSession {
    /// Whether a long-poll GET is parked waiting for packets (the one a shutdown answers `1`).
    var hasParkedPoll: Bool { lock.withLock { state.pendingPoll != nil } }
}
