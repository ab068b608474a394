
/// Result of a non-blocking read.
public enum ReadResult: Sendable, Equatable {
    /// `n > 0` bytes were read.
    case bytes(Int)
    /// The socket has nothing to read right now (EAGAIN/EWOULDBLOCK).
    case wouldBlock
    /// The peer closed its sending side (read returned 0).
    case eof
}

/// Result of a non-blocking send.
public enum WriteResult: Sendable, Equatable {
    /// `n >= 0` bytes were accepted by the kernel.
    case bytes(Int)
    /// The kernel send buffer is full (EAGAIN/EWOULDBLOCK).
    case wouldBlock
}

/// Result of a non-blocking accept.
public enum AcceptResult: Sendable {
    case accepted(Socket, remoteAddress: String)
    case wouldBlock
}

/// A thin value wrapper around a socket file descriptor: one method per system call.
///
/// - EINTR is retried inside every wrapper.
/// - EAGAIN is returned as `.wouldBlock`, EOF as `.eof`; everything else throws a `SocketError`
///   carrying the syscall name and errno captured immediately.
/// - Ownership of the descriptor is by convention: exactly one owner calls `close()`.
///   Factory functions close the descriptor themselves on every failure path.
public struct Socket: Sendable, Hashable {
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }

    /// Ignores SIGPIPE process-wide (idempotent). Sends are already protected (MSG_NOSIGNAL on Linux,
    /// SO_NOSIGPIPE on Darwin; see `Platform`); this covers any other write path.
    public static func ignoreSIGPIPE() {
        _ = SIGPIPEOnce.done
    }

    /// socket(2): a non-blocking, close-on-exec TCP socket.
    public static func makeTCP(ipv6: Bool) throws -> Socket {
        let fd = Platform.makeStreamSocket(family: ipv6 ? AF_INET6 : AF_INET)
        if fd < 0 { throw SocketError.current("socket") }
        return Socket(fd: fd)
    }

    /// Creates a listening socket bound to `host:port` (port 0 = ephemeral) with SO_REUSEADDR.
    /// The descriptor is closed on every failure path.
    public static func makeListener(host: String, port: Int, backlog: Int32) throws -> Socket {
        let address = try SocketAddress(host: host, port: port)
        let socket = try makeTCP(ipv6: address.isIPv6)
        do {
            try socket.setOption(level: SOL_SOCKET, name: Platform.reuseAddressOption, value: 1)
            try socket.bind(address)
            try socket.listen(backlog: backlog)
            return socket
        } catch {
            socket.close()
            throw error
        }
    }

    /// setsockopt(2) with an `Int32` value.
    public func setOption(level: Int32, name: Int32, value: Int32) throws {
        var v = value
        let rc = Platform.setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
        if rc != 0 { throw SocketError.current("setsockopt") }
    }

    /// Disables Nagle's algorithm (TCP_NODELAY).
    public func setNoDelay() throws {
        try setOption(level: Platform.tcpLevel, name: Platform.tcpNoDelayOption, value: 1)
    }

    /// bind(2).
    public func bind(_ address: SocketAddress) throws {
        let rc = address.withSockAddr { ptr, len in Platform.bind(fd, ptr, len) }
        if rc != 0 { throw SocketError.current("bind") }
    }

    /// listen(2).
    public func listen(backlog: Int32) throws {
        if Platform.listen(fd, backlog) != 0 { throw SocketError.current("listen") }
    }

    /// accept(2) of a non-blocking, close-on-exec socket (accept4 on Linux, accept + fcntl on
    /// Darwin; see `Platform.accept`). EINTR and ECONNABORTED are retried.
    public func accept() throws -> AcceptResult {
        while true {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Platform.accept(fd, $0, &len) }
            }
            if client >= 0 {
                return .accepted(Socket(fd: client), remoteAddress: SocketAddress.describe(storage))
            }
            let err = Platform.errno
            switch err {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: Platform.acceptCallName, errno: err)
            }
        }
    }

    /// read(2) into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> ReadResult {
        while true {
            let n = Platform.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .eof }
            let err = Platform.errno
            switch err {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: "read", errno: err)
            }
        }
    }

    /// send(2); a closed peer gives EPIPE, never SIGPIPE (`Platform.sendFlags`).
    public func send(_ buffer: UnsafeRawBufferPointer) throws -> WriteResult {
        if buffer.isEmpty { return .bytes(0) }
        while true {
            let n = Platform.send(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return .bytes(n) }
            let err = Platform.errno
            switch err {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: "send", errno: err)
            }
        }
    }

    /// shutdown(2) of the sending side; errors are ignored (the peer may already be gone).
    public func shutdownWrite() {
        _ = Platform.shutdown(fd, Platform.shutWrite)
    }

    /// SO_LINGER on with a zero timeout: the next `close()` sends a TCP reset (RST) instead of a
    /// FIN, and drops unsent data (the peer sees ECONNRESET). Errors are ignored, as for
    /// `shutdownWrite`.
    public func setResetOnClose() {
        var l = linger(l_onoff: 1, l_linger: 0)
        _ = Platform.setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }

    /// close(2). EINTR is not retried (on Linux the descriptor is released regardless).
    public func close() {
        _ = Platform.close(fd)
    }

    /// getsockname(2): the locally bound port.
    public func localPort() throws -> Int {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Platform.getsockname(fd, $0, &len) }
        }
        if rc != 0 { throw SocketError.current("getsockname") }
        return SocketAddress.port(of: storage)
    }
}

private enum SIGPIPEOnce {
    // Lazily initialised globals run exactly once (swift_once), which gives us "once" semantics.
    static let done: Bool = {
        _ = signal(SIGPIPE, SIG_IGN)
        return true
    }()
}
