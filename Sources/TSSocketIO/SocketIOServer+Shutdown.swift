import TSEngineIO

extension SocketIOServer {
    /// Server shutdown (Socket.IO v5, "Disconnection"): every socket gets a DISCONNECT packet
    /// for its namespace (clients report "io server disconnect" and do not reconnect), then its
    /// Engine.IO session closes — WebSocket Close 1001, a pending poll answered with the queued
    /// packets and a close packet (`EngineIOServer.shutdown`). `onDisconnect` gets `reason`.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown) {
        for socket in connectedSockets {
            _ = socket.sendPacket(SocketIOPacket(type: .disconnect, namespace: socket.namespace))
        }
        engine.shutdown(reason: reason)
    }
}
