
/// Client-side connections (used by load generators such as `bench/touchsync-bench`).
extension Connection {
    /// Opens a non-blocking TCP connection to `host:port` on `loop` and installs the handler made
    /// by `makeHandler`. connect(2) returns EINPROGRESS; bytes written before the handshake
    /// completes are buffered (send(2) answers EAGAIN) and flushed when writable, and a refused
    /// connection reports `connectionDidClose` with the error. Loop only.
    public static func connect(host: String, port: Int, on loop: EventLoop, id: UInt64, maxOutboundBytes: Int = 4 << 20,
                               makeHandler: (Connection) -> ConnectionHandler) throws -> Connection {
        assert(loop.inEventLoop, "Connection.connect must be called on the loop")
        let address = try SocketAddress(host: host, port: port)
        let socket = try Socket.makeTCP(ipv6: address.isIPv6)
        let rc = address.withSockAddr { ptr, len in Platform.connect(socket.fd, ptr, len) }
        if rc != 0 && Platform.errno != EINPROGRESS {
            let e = SocketError.current("connect")
            socket.close()
            throw e
        }
        try? socket.setNoDelay()
        let connection = Connection(id: id, socket: socket, loop: loop, remoteAddress: "\(host):\(port)", maxOutboundBytes: maxOutboundBytes)
        do { try connection.activate() } catch {
            socket.close()
            throw error
        }
        connection.handler = makeHandler(connection)
        return connection
    }
}
