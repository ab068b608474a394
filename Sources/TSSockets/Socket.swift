#if canImport(Glibc)
import Glibc
#endif

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

    /// Ignores SIGPIPE process-wide (idempotent). Sends also use MSG_NOSIGNAL; this covers any other write path.
    public static func ignoreSIGPIPE() {
        _ = SIGPIPEOnce.done
    }

    /// socket(2): a non-blocking, close-on-exec TCP socket.
    public static func makeTCP(ipv6: Bool) throws -> Socket {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = Glibc.socket(ipv6 ? AF_INET6 : AF_INET, type, 0)
        if fd < 0 { throw SocketError.current("socket") }
        return Socket(fd: fd)
    }

    /// Creates a listening socket bound to `host:port` (port 0 = ephemeral) with SO_REUSEADDR.
    /// The descriptor is closed on every failure path.
    public static func makeListener(host: String, port: Int, backlog: Int32) throws -> Socket {
        let address = try SocketAddress(host: host, port: port)
        let socket = try makeTCP(ipv6: address.isIPv6)
        do {
            try socket.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
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
        let rc = Glibc.setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
        if rc != 0 { throw SocketError.current("setsockopt") }
    }

    /// Disables Nagle's algorithm (TCP_NODELAY).
    public func setNoDelay() throws {
        try setOption(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// bind(2).
    public func bind(_ address: SocketAddress) throws {
        let rc = address.withSockAddr { ptr, len in Glibc.bind(fd, ptr, len) }
        if rc != 0 { throw SocketError.current("bind") }
    }

    /// listen(2).
    public func listen(backlog: Int32) throws {
        if Glibc.listen(fd, backlog) != 0 { throw SocketError.current("listen") }
    }

    /// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC. EINTR and ECONNABORTED are retried.
    public func accept() throws -> AcceptResult {
        while true {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let client = withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Epoll.accept4(fd, $0, &len, flags) }
            }
            if client >= 0 {
                return .accepted(Socket(fd: client), remoteAddress: SocketAddress.describe(storage))
            }
            let err = Glibc.errno
            switch err {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: "accept4", errno: err)
            }
        }
    }

    /// read(2) into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> ReadResult {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .eof }
            let err = Glibc.errno
            switch err {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: "read", errno: err)
            }
        }
    }

    /// send(2) with MSG_NOSIGNAL.
    public func send(_ buffer: UnsafeRawBufferPointer) throws -> WriteResult {
        if buffer.isEmpty { return .bytes(0) }
        while true {
            let n = Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return .bytes(n) }
            let err = Glibc.errno
            switch err {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(syscall: "send", errno: err)
            }
        }
    }

    /// shutdown(2) of the sending side; errors are ignored (the peer may already be gone).
    public func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// close(2). EINTR is not retried (on Linux the descriptor is released regardless).
    public func close() {
        _ = Glibc.close(fd)
    }

    /// getsockname(2): the locally bound port.
    public func localPort() throws -> Int {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.getsockname(fd, $0, &len) }
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
