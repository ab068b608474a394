// The tests' raw clients talk to the server through their own socket calls, independent of
// TSSockets (the code under test). This is the one test file that tells Linux from Darwin.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// Blocking client sockets for tests.
public enum TestSockets {
    /// A blocking TCP socket connected to 127.0.0.1:`port`, with `configure` run before connect(2)
    /// (e.g. SO_RCVBUF). A closed peer gives EPIPE, never SIGPIPE (`send` below, and SO_NOSIGPIPE on
    /// Darwin). Returns -1 with errno set on failure (the socket is closed).
    public static func connectLoopback(port: Int, configure: (Int32) -> Void = { _ in }) -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return -1 }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        configure(fd)
        var addr = sockaddr_in()
        #if canImport(Darwin)
        addr.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 {
            let saved = errno
            close(fd)
            errno = saved
            return -1
        }
        return fd
    }

    /// A TCP port free on 127.0.0.1 right now (bound to port 0, read back, closed), for a helper
    /// server a test starts itself (redis: RedisTestServer). 0 on failure.
    public static func freeLoopbackPort() -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        guard bindSource(fd, address: "127.0.0.1") else { return 0 }
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return rc == 0 ? Int(UInt16(bigEndian: addr.sin_port)) : 0
    }

    /// Binds the client end of `fd` to `address` (e.g. "127.0.0.2", any of 127/8 on Linux) before
    /// connect(2), so the server sees another client address. False when bind(2) fails.
    @discardableResult
    public static func bindSource(_ fd: Int32, address: String) -> Bool {
        var local = sockaddr_in()
        #if canImport(Darwin)
        local.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(address)
        return withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether this machine lets a client bind `address` (a loopback alias such as "127.0.0.2"):
    /// Linux routes all of 127/8 to lo, macOS's lo0 has only 127.0.0.1 until an alias is added
    /// (`sudo ifconfig lo0 alias 127.0.0.2 up`).
    public static func canBindSource(_ address: String) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bindSource(fd, address: address)
    }

    /// SO_RCVBUF: a small one lets a test play a slow consumer.
    public static func setReceiveBuffer(_ fd: Int32, bytes: Int32) {
        var size = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// send(2) without SIGPIPE.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        return Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #else
        return Darwin.send(fd, bytes.baseAddress, bytes.count, 0)
        #endif
    }

    /// SO_RCVTIMEO: a blocking read gives up (EAGAIN) after `seconds`.
    public static func setReceiveTimeout(_ fd: Int32, seconds: Double) {
        let whole = seconds.rounded(.down)
        var tv = timeval()
        tv.tv_sec = .init(whole)
        tv.tv_usec = .init((seconds - whole) * 1e6)  // Int on glibc, Int32 on Darwin
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}
