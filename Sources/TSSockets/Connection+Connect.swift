
/// Client-side connections (used by load generators such as `bench/touchsync-bench`).
extension Connection {
    /// Opens a non-blocking TCP connection to `host:port` on `loop` and installs the handler made
    /// by `makeHandler`. connect(2) returns EINPROGRESS; bytes written before the handshake
    /// completes are buffered (send(2) answers EAGAIN) and flushed when writable, and a refused
    /// connection reports `connectionDidClose` with the error. Loop only.
    /// `source`: the local address to connect from (port chosen by the kernel). The ephemeral
    /// ports of one source address toward one server address run out near 28,000 connections
    /// (`ip_local_port_range`), so a load generator holding more spreads them over several
    /// loopback addresses (127.0.0.0/8 is all local on Linux).
    public static func connect(host: String, port: Int, on loop: EventLoop, id: UInt64, source: String? = nil, maxOutboundBytes: Int = 4 << 20,
                               makeHandler: (Connection) -> ConnectionHandler) throws -> Connection {
        assert(loop.inEventLoop, "Connection.connect must be called on the loop")
        let address = try SocketAddress(host: host, port: port)
        let socket = try Socket.makeTCP(ipv6: address.isIPv6)
        if let source {
            do { try socket.bind(SocketAddress(host: source, port: 0)) } catch {
                socket.close()
                throw error
            }
        }
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
