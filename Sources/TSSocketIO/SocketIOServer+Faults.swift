import TSEngineIO

/// What the test-mode fault routes (`POST /api/test/faults`, docs/test-mode.md) need from the
/// hub: the Engine.IO sessions behind a user's sockets, and a server-side kick.
extension SocketIOServer {
    /// The Engine.IO sessions carrying a connected socket of `userID`, each once.
    public func engineSessions(ofUser userID: String) -> [EngineIOSession] {
        var seen = Set<String>()
        return connectedSockets.filter { $0.userID == userID }.map(\.session).filter { seen.insert($0.id).inserted }
    }

    /// The connected sockets (of every namespace) on the Engine.IO session `sid`.
    public func sockets(onEngineSession sid: String) -> [SocketIOSocket] {
        connectedSockets.filter { $0.session.id == sid }
    }

    /// A server-side disconnect of the whole connection: every socket on `session` gets a
    /// Socket.IO DISCONNECT (so the client does not reconnect: Socket.IO v5, "Disconnection
    /// from a namespace"). The client then closes the connection itself, as python-socketio and
    /// socket.io-client do once no namespace is left; closing it here at once would race that
    /// packet (a client that reads the end of the stream first reports a transport error and
    /// reconnects). A client that keeps it open has it closed after `pingTimeout`. Injected
    /// faults are removed first (what they held is discarded), so the DISCONNECT is not held or
    /// delayed behind them.
    public func kick(_ session: EngineIOSession) {
        session.discardFaults()
        let sockets = sockets(onEngineSession: session.id)
        logger.info("server disconnect of Engine.IO session \(session.id): DISCONNECT to \(sockets.count) socket(s) \(sockets.map(\.id))")
        for socket in sockets { socket.disconnect() }
        let grace = max(.milliseconds(1), engine.configuration.pingTimeout).clockNanoseconds
        engine.timerLoop.scheduleTask(in: grace) { session.close(reason: EngineCloseReason.forcedClose) }
    }
}
