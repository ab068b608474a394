import Foundation

/// The Engine.IO heartbeat cases (protocol v4, "Heartbeat"; the "heartbeat" cases of the official
/// engine.io-protocol and socket.io-protocol test suites, which both run them), written once for
/// every test that checks them: the server pings every pingInterval, a client that answers each
/// ping with a pong keeps its session, and a session whose client does not answer within
/// pingTimeout is closed. Each check returns what it saw; the caller asserts.
public enum EngineHeartbeatCheck {
    /// One round of ping/pong over long-polling as `pollingPingPong` reports it when it went right.
    public static let answeredRound = "GET 200 2, POST 200"

    /// `rounds` times: a GET (which parks until the server's ping) and a POST answering it with
    /// a pong. One `answeredRound` per round when the server pinged and took each pong.
    public static func pollingPingPong(rounds: Int = 3, poll: () -> RawHTTP.Response, pong: () -> RawHTTP.Response) -> [String] {
        (0..<rounds).map { _ in
            let ping = poll()
            let answer = ping.status == 200 && ping.text == "2" ? pong().status : 0
            return "GET \(ping.status) \(ping.text), POST \(answer)"
        }
    }

    /// Whether a polling session whose client never answers a ping is closed: GETs until one is
    /// refused (400, the session is gone). Each GET parks until the server has a packet for it
    /// (the ping, then the close), so this waits on the server's own timers instead of sleeping
    /// for a guess of them; the bound is well past pingInterval + pingTimeout.
    public static func pollingSessionCloses(pingInterval: Int, pingTimeout: Int, poll: () -> RawHTTP.Response) -> Bool {
        blockUntil(timeout: .milliseconds(4 * (pingInterval + pingTimeout) + 2_000)) { poll().status == 400 }
    }

    /// `rounds` pings read from a WebSocket session (open packet already consumed), each answered
    /// with a pong; the messages read, `.text("2")` each when the server pinged every time.
    public static func webSocketPingPong(_ ws: RawWebSocketClient, rounds: Int = 3) -> [RawWebSocketClient.Message] {
        (0..<rounds).map { _ in
            let message = ws.receive()
            ws.send("3")
            return message
        }
    }
}
