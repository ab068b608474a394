import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSocketIO
import TSSockets
import TSWebSocket

/// The servers behind the conformance endpoints (the official Engine.IO v4 / Socket.IO v5
/// test suites and Autobahn): a raw Engine.IO echo at `/engine.io/`, a Socket.IO server at
/// `/socket.io/` with namespaces `/` and `/custom`, and a plain WebSocket echo at `/echo`.
final class ConformanceApp: Sendable {
    let engineEcho: EngineIOServer
    let engineEchoDelegate: EngineEchoDelegate
    let socketIO: SocketIOServer

    init(pingInterval: Int, pingTimeout: Int, logger: Logger) throws {
        var engineConfig = EngineIOConfiguration(pingInterval: pingInterval, pingTimeout: pingTimeout, maxPayload: 1_000_000)
        engineConfig.path = "/engine.io/"
        engineEcho = try EngineIOServer(configuration: engineConfig, logger: logger)
        engineEchoDelegate = EngineEchoDelegate()
        engineEcho.delegate = engineEchoDelegate

        var sioEngine = EngineIOConfiguration(pingInterval: pingInterval, pingTimeout: pingTimeout, maxPayload: 1_000_000)
        sioEngine.path = "/socket.io/"
        socketIO = try SocketIOServer(configuration: SocketIOConfiguration(engine: sioEngine, namespaces: ["/", "/custom"]),
                                      clock: SystemClock(), logger: logger, timerLoop: engineEcho.timerLoop)
        socketIO.onConnect { socket in
            socket.emit("auth", [socket.handshake.auth ?? .object(JSONObject())])
        }
        socketIO.on("message", withAttachments: { socket, event, _ in
            socket.emit("message-back", event.args, attachments: event.attachments)
        })
        socketIO.on("message-with-ack", withAttachments: { _, event, ack in
            ack?.send(event.args, attachments: event.attachments)
        })
    }

    /// Adds `/engine.io/*` and `/socket.io/*` for every method (the Engine.IO servers answer
    /// 400 to bad methods as the reference server does, instead of the router's 405).
    func register(into b: inout RouterBuilder) {
        engineEcho.mount(on: &b)
        socketIO.mount(on: &b)
    }
}

/// Echoes every Engine.IO message, text or binary.
final class EngineEchoDelegate: EngineIOServerDelegate {
    func sessionOpened(_ session: EngineIOSession, request: HTTPRequest) {}
    func session(_ session: EngineIOSession, didReceiveText text: String) { session.send(text: text) }
    func session(_ session: EngineIOSession, didReceiveBinary bytes: [UInt8]) { session.send(binary: bytes) }
    func sessionClosed(_ session: EngineIOSession, reason: String) {}
}
