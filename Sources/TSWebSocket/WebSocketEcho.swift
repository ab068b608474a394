// An echo endpoint (RFC 6455 §6: every received message is sent back unchanged), used by the
// conformance server at `/echo` for the Autobahn|Testsuite.
import TSHTTP

public enum WebSocketEcho {
    /// An HTTP handler that upgrades the request and echoes every text/binary message.
    public static func handler(configuration: WebSocketConfiguration = .default) -> HTTPHandler {
        { request in
            WebSocketHandshake.response(for: request, configuration: configuration) { ws in
                ws.delegate = EchoDelegate()
            }
        }
    }
}

/// Echoes messages. Owned by its connection (strong delegate) until close.
final class EchoDelegate: WebSocketDelegate {
    func webSocket(_ ws: WebSocketConnection, didReceive message: WebSocketMessage) {
        ws.sendFrameBytes(WebSocketFrameEncoder.encodeMessage(message))
    }

    func webSocketDidClose(_ ws: WebSocketConnection, code: UInt16?, reason: String) {}
}
