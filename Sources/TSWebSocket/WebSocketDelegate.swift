// Application-facing events of an upgraded connection (RFC 6455 §6.2 receiving data, §7.1.4/§7.1.5
// _The WebSocket Connection is Closed_ with its close code and reason).

/// Receives a `WebSocketConnection`'s events, always on the connection's event loop thread.
public protocol WebSocketDelegate: AnyObject {
    /// A complete (reassembled, UTF-8-validated for text) message arrived.
    func webSocket(_ ws: WebSocketConnection, didReceive message: WebSocketMessage)

    /// The WebSocket closed; called exactly once, after which the connection releases its delegate.
    /// - Parameters:
    ///   - code: the close status of the closing handshake — the peer's code if the peer closed,
    ///     ours if we closed or failed the connection (e.g. 1002, 1007, 1009); nil when no code
    ///     was exchanged (peer sent an empty Close, §7.1.5 "1005", or the TCP connection ended
    ///     without a Close, "1006").
    ///   - reason: the matching reason text; for a TCP-level end, a description of why
    ///     (e.g. "slow consumer", "peer closed").
    func webSocketDidClose(_ ws: WebSocketConnection, code: UInt16?, reason: String)

    /// The outbound buffer drained to zero after having held data (back-pressure relief).
    func webSocketWritabilityChanged(_ ws: WebSocketConnection)
}

extension WebSocketDelegate {
    public func webSocketWritabilityChanged(_ ws: WebSocketConnection) {}
}
