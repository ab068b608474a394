/// The platform layer. `Platform+Glibc.swift` (Linux) and `Platform+Darwin.swift` (macOS) each
/// extend it with the same members where the two systems differ; every difference lives in those
/// two files (and in the CSystem shim), so the rest of the package never says `#if os`. What is
/// the same on both is here. Each member is one system call or one constant; callers handle
/// errno (captured right after the call).
public enum Platform {
    /// Backends this build can run: the system's own (`defaultPoller`) and the portable poll(2).
    public static let availablePollers: [PollerKind] = [defaultPoller, .poll]

    /// Makes a poller of `kind` (`auto` resolved first): poll(2) everywhere, else the system's own
    /// backend when this build has it.
    static func makePoller(_ kind: PollerKind) throws -> any Poller {
        let resolved = kind.resolved
        guard availablePollers.contains(resolved) else { throw PollerError.unavailable(resolved) }
        return resolved == .poll ? try PollPoller() : try makeSystemPoller()
    }

    // MARK: sockets

    /// SO_REUSEADDR on listeners (rebinding while old connections sit in TIME_WAIT). SO_REUSEPORT
    /// is deliberately not used: on Linux it would let a second server bind the same busy port.
    static let reuseAddressOption = SO_REUSEADDR
    static let tcpLevel = Int32(IPPROTO_TCP)
    static let tcpNoDelayOption = TCP_NODELAY
    static let shutWrite = Int32(SHUT_WR)

    /// An IPv4 socket address for `port` (the wildcard address), with the length field where the
    /// system has one.
    static func makeIPv4Address(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        setLength(of: &a)
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(port.bigEndian)
        return a
    }

    /// An IPv6 socket address for `port` (the wildcard address), likewise.
    static func makeIPv6Address(port: UInt16) -> sockaddr_in6 {
        var a = sockaddr_in6()
        setLength(of: &a)
        a.sin6_family = sa_family_t(AF_INET6)
        a.sin6_port = in_port_t(port.bigEndian)
        return a
    }

    // MARK: plain descriptors (named here because Socket's methods shadow the libc names; the C
    // library is reached through TSSync, which re-exports Glibc or Darwin)

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { TSSync.read(fd, buffer, count) }
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { TSSync.write(fd, buffer, count) }
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { TSSync.send(fd, buffer, count, sendFlags) }
    static func close(_ fd: Int32) -> Int32 { TSSync.close(fd) }
    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { TSSync.bind(fd, address, length) }
    static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { TSSync.listen(fd, backlog) }
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { TSSync.connect(fd, address, length) }
    static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { TSSync.shutdown(fd, how) }
    static func getsockname(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        TSSync.getsockname(fd, address, length)
    }
    static func setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer, _ length: socklen_t) -> Int32 {
        TSSync.setsockopt(fd, level, name, value, length)
    }
    static var errno: Int32 { TSSync.errno }

    /// Closes each descriptor, errors ignored: a poller closing the descriptors it owns, or
    /// undoing a half-done set-up (errno is captured before).
    static func closeIgnoringErrors(_ fds: Int32...) {
        for fd in fds { _ = close(fd) }
    }
}
