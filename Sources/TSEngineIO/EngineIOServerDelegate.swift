import TSHTTP

/// Receives session events from an `EngineIOServer`. Calls arrive on network threads (an
/// event-loop thread or an HTTP handler task) and must return quickly; for one session they
/// arrive in the order the packets were received on its transport.
public protocol EngineIOServerDelegate: AnyObject, Sendable {
    /// A session was opened (after the open packet was queued or sent). `request` is the
    /// handshake request (its query, headers and peer are also in `session.handshake`).
    func sessionOpened(_ session: EngineIOSession, request: HTTPRequest)
    func session(_ session: EngineIOSession, didReceiveText text: String)
    func session(_ session: EngineIOSession, didReceiveBinary bytes: [UInt8])
    /// Called exactly once per session.
    func sessionClosed(_ session: EngineIOSession, reason: String)
    /// The session moved from polling to websocket (default: nothing).
    func sessionUpgraded(_ session: EngineIOSession)
}

extension EngineIOServerDelegate {
    public func sessionUpgraded(_ session: EngineIOSession) {}
}
