/// Receives a `Connection`'s events. All calls happen on the connection's event loop.
public protocol ConnectionHandler: AnyObject {
    /// Bytes arrived. `bytes` is only valid for the duration of the call (it points into the
    /// loop's shared read buffer): copy what you keep.
    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer)
    /// The connection closed (exactly once). The handler is released afterwards.
    func connectionDidClose(_ connection: Connection, reason: CloseReason)
    /// The outbound buffer drained to zero after having held data (back-pressure relief).
    func connectionWritabilityChanged(_ connection: Connection)
}

extension ConnectionHandler {
    public func connectionWritabilityChanged(_ connection: Connection) {}
}

/// Handler installed before the real one and after close; drops everything.
final class NoOpConnectionHandler: ConnectionHandler {
    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {}
    func connectionDidClose(_ connection: Connection, reason: CloseReason) {}
}
