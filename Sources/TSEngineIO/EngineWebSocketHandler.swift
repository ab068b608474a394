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
    func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void) {
        // The first hop lands in a task phase; the second runs on the following iteration,
        // after its epoll_wait has delivered whatever was readable.
        let loop = self.loop
        loop.execute { loop.execute(body) }
    }
}

/// Routes one WebSocket's events to its Engine.IO session (as active or probing transport).
/// Installed as the connection's delegate in `onUpgrade`; runs on the connection's loop.
// @unchecked Sendable: `session` is immutable; the class has no other state.
final class EngineWebSocketHandler: WebSocketDelegate, @unchecked Sendable {
    let session: EngineIOSession

    init(session: EngineIOSession) { self.session = session }

    func webSocket(_ ws: WebSocketConnection, didReceive message: WebSocketMessage) {
        session.webSocket(ws, didReceive: message)
    }

    func webSocketDidClose(_ ws: WebSocketConnection, code: UInt16?, reason: String) {
        session.webSocketDidClose(ws, slowConsumer: ws.transportCloseReason == .slowConsumer)
    }
}
