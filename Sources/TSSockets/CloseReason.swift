/// Why a `Connection` closed.
public enum CloseReason: Sendable, Equatable, CustomStringConvertible {
    /// The peer closed the connection (EOF or hang-up).
    case peerClosed
    /// A socket system call failed.
    case error(SocketError)
    /// The peer did not read fast enough: pending outbound bytes exceeded `maxOutboundBytes`.
    case slowConsumer
    /// A protocol timeout (header read, idle, ping, ...).
    case timeout
    /// The peer violated the protocol.
    case protocolError(String)
    /// The server is shutting down.
    case serverShutdown
    /// Closed locally for another reason.
    case local(String)

    public var description: String {
        switch self {
        case .peerClosed: return "peer closed"
        case .error(let e): return "error: \(e)"
        case .slowConsumer: return "slow consumer"
        case .timeout: return "timeout"
        case .protocolError(let s): return "protocol error: \(s)"
        case .serverShutdown: return "server shutdown"
        case .local(let s): return "local: \(s)"
        }
    }
}
