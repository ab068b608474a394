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

    init(pingInterval: Duration, pingTimeout: Duration, logger: Logger) throws {
        var engineConfig = EngineIOConfiguration(pingInterval: pingInterval, pingTimeout: pingTimeout, maxPayload: 1_000_000)
        engineConfig.path = "/engine.io/"
        engineEcho = try EngineIOServer(configuration: engineConfig, logger: logger)
        engineEchoDelegate = EngineEchoDelegate()
        engineEcho.delegate = engineEchoDelegate

        var sioEngine = EngineIOConfiguration(pingInterval: pingInterval, pingTimeout: pingTimeout, maxPayload: 1_000_000)
        sioEngine.path = "/socket.io/"
        // The official Socket.IO suite's client reads one frame per tick: the CONNECT reply
        // must arrive alone (off in `touchsync serve`, where real clients parse whole reads).
        sioEngine.setupPacing = .officialTestSuite
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
        // Rooms (not used by the official suites; our live tests use them to show that rooms
        // belong to their namespace): `join` a room, then `to-room` [room, payload] emits
        // `room-message` [payload] to that room of the sender's namespace (sender included).
        socketIO.on("join") { socket, args, ack in
            guard let room = args.first?.stringValue else { ack?.send([false]); return }
            socket.join(room)
            ack?.send([true])
        }
        let hub = socketIO
        socketIO.on("to-room") { socket, args, ack in
            guard args.count == 2, let room = args.first?.stringValue else { ack?.send([0]); return }
            let n = hub.emit("room-message", [args[1]], to: .room(room, namespace: socket.namespace))
            ack?.send([.int(Int64(n))])
        }
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
