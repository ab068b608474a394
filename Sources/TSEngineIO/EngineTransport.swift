/// The transport a session currently uses (Engine.IO v4, "Transports").
public enum EngineTransport: String, Sendable {
    case polling
    case websocket
}

/// Reasons a session closes, as the reference server names them.
public enum EngineCloseReason {
    public static let transportClose = "transport close"
    public static let transportError = "transport error"
    public static let forcedClose = "forced close"
    public static let pingTimeout = "ping timeout"
    public static let parseError = "parse error"
    public static let slowConsumer = "slow consumer"
    public static let serverShutdown = "server shutting down"
    public static let payloadTooLarge = "payload too large"
    public static let pollCancelled = "poll cancelled"
}
