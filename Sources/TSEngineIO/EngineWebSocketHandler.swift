import TSSockets
import TSWebSocket

extension WebSocketConnection: EngineWebSocketTransport {
    func engineSend(text: String) { send(text: text) }
    func engineSend(binary: [UInt8]) { send(binary: binary) }
    func engineSend(frame: [UInt8]) { sendFrameBytes(frame) }
    func engineSend(frame: [UInt8], thenAfter gapNanoseconds: UInt64, _ next: @escaping @Sendable () -> Void) {
        let loop = self.loop
        loop.executeOrRun { [self] in
            sendFrameBytes(frame)  // on the loop: appended now, flushed at the end of this iteration
            // A timer runs at the start of a later iteration, so after this one's flush.
            loop.scheduleTask(in: max(1, gapNanoseconds), next)
        }
    }
    func engineClose() { close(code: WebSocketCloseCode.normalClosure, reason: "") }
    func engineGoAway() { goAway(reason: "server shutting down") }
    func engineDrop(reset: Bool) {
        if reset { connection.reset(.local("test fault: transport error")) } else { connection.closeGracefully(.local("test fault: transport close")) }
    }
    func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void) {
        // The first hop lands in a task phase; the second runs on the following iteration,
        // after its epoll_wait has delivered whatever was readable.
        let loop = self.loop
        loop.execute { loop.execute(body) }
    }
}

/// Routes one WebSocket's events to its Engine.IO session (as active or probing transport).
/// Installed as the connection's delegate in `onUpgrade`; runs on the connection's loop.
/// `transport` is what the session knows this WebSocket as (the connection itself, or a wrapper
/// around it: `EngineIOServer.engineTransport(for:)`).
// @unchecked Sendable: `session` and `transport` are immutable; the class has no other state.
final class EngineWebSocketHandler: WebSocketDelegate, @unchecked Sendable {
    let session: EngineIOSession
    let transport: any EngineWebSocketTransport

    init(session: EngineIOSession, transport: any EngineWebSocketTransport) {
        self.session = session
        self.transport = transport
    }

    func webSocket(_ ws: WebSocketConnection, didReceive message: WebSocketMessage) {
        session.webSocket(transport, didReceive: message)
    }

    func webSocketDidClose(_ ws: WebSocketConnection, code: UInt16?, reason: String) {
        session.webSocketDidClose(transport, slowConsumer: ws.transportCloseReason == .slowConsumer)
    }
}
