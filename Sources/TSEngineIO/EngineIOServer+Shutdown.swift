import TSWebSocket

extension EngineIOServer {
    /// Server shutdown: closes every session at once so that every client comes back to the
    /// next process, whatever its transport. The reference server has two behaviours here, and
    /// real clients follow only one of them back:
    /// - a WebSocket gets a Close frame with no status code (engine.io's websocket transport
    ///   calls `ws.close()` with no arguments) and its TCP connection is closed without waiting
    ///   for the peer's Close (`WebSocketConnection.goAway`), as both behaviours do;
    /// - a pending long-poll GET is not answered: its connection closes, as it does when a Node
    ///   process simply exits. The reference's graceful `io.close()` answers it with a `1` close
    ///   packet instead (engine.io's polling transport, `doClose`), which python-engineio reads as a
    ///   server disconnect and never reconnects after; a closed connection is a transport error,
    ///   after which python-engineio, engine.io-client and Socket.IO-Client-Swift all reconnect.
    /// Nothing is sent at the layers above. The delegate sees `reason`. A kick (logout, account
    /// deletion, the inspector's Disconnect) is not this path: it sends Socket.IO DISCONNECT.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown) {
        for s in allSessions { s.closeForShutdown(reason: reason) }
    }
}

extension EngineIOSession {
    /// See `EngineIOServer.shutdown(reason:)` and `EngineIOSessionStateMachine.shutdown`.
    func closeForShutdown(reason: String) {
        perform { state.machine.shutdown(reason: reason, into: &$0) }
    }
}

extension EngineIOSession {
    /// Whether a long-poll GET is parked waiting for packets (the one a shutdown leaves unanswered).
    var hasParkedPoll: Bool { lock.withLock { state.machine.hasParkedPoll } }
}
