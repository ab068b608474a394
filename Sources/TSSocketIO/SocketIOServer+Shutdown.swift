import TSEngineIO

extension SocketIOServer {
    /// Server shutdown (Socket.IO v5, "Disconnection"): every socket gets a DISCONNECT packet
    /// for its namespace (clients report a server disconnect and do not reconnect), as the
    /// last packets of its Engine.IO session, which then closes — WebSocket Close 1001, a
    /// pending poll answered with the DISCONNECT and a close packet (`EngineIOServer.shutdown`).
    /// `onDisconnect` gets `reason`.
    public func shutdown(reason: String = EngineCloseReason.serverShutdown) {
        var bySession: [ObjectIdentifier: [SocketIOSocket]] = [:]
        for socket in connectedSockets { bySession[ObjectIdentifier(socket.session), default: []].append(socket) }
        engine.shutdown(reason: reason) { session in
            (bySession[ObjectIdentifier(session)] ?? []).flatMap { socket in
                Self.preEncode(SocketIOPacket(type: .disconnect, namespace: socket.namespace))
            }
        }
    }
}
