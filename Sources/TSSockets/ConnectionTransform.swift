/// A byte-stream layer between a connection's socket and its handler — TLS (TSTLS's
/// `TLSConnectionTransform`) is the one there is. With a transform set, the connection hands it
/// the bytes read from the socket instead of giving them to the handler, and passes every
/// message written through it before queueing; the transform gives the handler its plaintext
/// with `Connection.deliverInbound` and sends its own protocol bytes (handshake, alerts) with
/// `Connection.writeBypassingTransform`. Everything above (HTTP, WebSocket, Engine.IO) is unchanged.
///
/// All calls happen on the connection's event loop.
public protocol ConnectionTransform: AnyObject {
    /// Bytes read from the socket (valid only during the call).
    func connectionDidReceive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer)
    /// One message written by the handler (`first` then `second`): the bytes to queue instead.
    /// Empty when nothing can be sent yet (the transform then sends it itself later).
    func transformOutbound(_ connection: Connection, _ first: [UInt8], _ second: [UInt8]) -> [UInt8]
    /// A graceful close starts: the last bytes to send before the sending side shuts (e.g. TLS
    /// close_notify), or empty.
    func connectionWillCloseGracefully(_ connection: Connection) -> [UInt8]
}

/// Makes the transform of a newly accepted connection, on its loop, before its handler exists.
/// May close the connection (e.g. too many handshakes in progress); the listener then installs
/// no handler.
public typealias ConnectionTransformFactory = @Sendable (Connection) -> ConnectionTransform?
