import TSEngineIO

extension SocketIOServer {
    /// Server shutdown, as the reference server's `Server.close()` (socket.io
    /// `packages/socket.io/lib/index.ts`): every socket is closed on the server side with
    /// `reason` and is sent nothing at the Socket.IO level, then the Engine.IO sessions close
    /// (`EngineIOServer.shutdown`). No DISCONNECT packet: clients read that as a kick and stay
    /// away (Socket.IO v5, "Disconnection"); a closed transport they read as `transport close`
    /// and reconnect with their backoff, which is what a restart needs. `onDisconnect` gets
    /// `reason`. A kick (`SocketIOSocket.disconnect`, used on logout) still sends DISCONNECT.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown) {
        engine.shutdown(reason: reason)
    }
}
