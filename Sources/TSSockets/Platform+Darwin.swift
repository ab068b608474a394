#if canImport(Darwin)
import Darwin

// Never compiled on a Mac by us: scripts/check-darwin-typecheck type-checks it on Linux against a
// stand-in Darwin module written from Apple's open-source headers, and the CI's macos-15 job
// builds and tests it (docs/macos.md).

/// The Darwin (macOS) half of the platform layer (Platform.swift); same members as
/// `Platform+Glibc.swift`.
extension Platform {
    public static let defaultPoller = PollerKind.kqueue

    static func makeSystemPoller() throws -> any Poller { try KQueuePoller() }

    // MARK: sockets

    /// socket(2) + fcntl(2): Darwin has no SOCK_NONBLOCK/SOCK_CLOEXEC type flags (SOCK_STREAM is
    /// a plain Int32 macro there) and no MSG_NOSIGNAL, so the socket gets O_NONBLOCK, FD_CLOEXEC
    /// and SO_NOSIGPIPE after creation. -1 with errno on failure (the descriptor is closed).
    static func makeStreamSocket(family: Int32) -> Int32 {
        let fd = Darwin.socket(family, SOCK_STREAM, 0)
        if fd < 0 { return -1 }
        return configureNewSocket(fd)
    }

    /// accept(2) + the same fcntl/setsockopt calls (Darwin has no accept4). -1 with errno on failure.
    static func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        let client = Darwin.accept(fd, address, length)
        if client < 0 { return -1 }
        return configureNewSocket(client)
    }
    static let acceptCallName = "accept"

    /// O_NONBLOCK, FD_CLOEXEC and SO_NOSIGPIPE on a new socket; closes it and returns -1 (errno
    /// preserved) when one fails.
    private static func configureNewSocket(_ fd: Int32) -> Int32 {
        // fcntl(2): F_GETFL/F_SETFL for O_NONBLOCK, F_SETFD for FD_CLOEXEC (<fcntl.h>).
        let flags = Darwin.fcntl(fd, F_GETFL)
        var ok = flags >= 0
        if ok { ok = Darwin.fcntl(fd, F_SETFL, flags | O_NONBLOCK) >= 0 }
        if ok { ok = Darwin.fcntl(fd, F_SETFD, FD_CLOEXEC) >= 0 }
        if ok {
            // SO_NOSIGPIPE (<sys/socket.h>, int option): EPIPE instead of SIGPIPE on this socket.
            var one: Int32 = 1
            ok = Darwin.setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
        }
        if !ok {
            let saved = Darwin.errno
            _ = Darwin.close(fd)
            Darwin.errno = saved
            return -1
        }
        return fd
    }

    /// Darwin has no MSG_NOSIGNAL; every socket carries SO_NOSIGPIPE instead (see above).
    static let sendFlags: Int32 = 0

    /// BSD sockets carry the structure's length in `sin_len` / `sin6_len`.
    static func setLength(of address: inout sockaddr_in) { address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size) }
    static func setLength(of address: inout sockaddr_in6) { address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size) }

    // MARK: batched sends (io_uring is Linux-only: the loops use one send(2) per connection here)

    static func makeSendRing(entries: Int) -> (ring: OpaquePointer?, failure: String?) {
        (nil, "io_uring is Linux-only")
    }
    static func destroySendRing(_ ring: OpaquePointer) {}
    static func sendRingCapacity(_ ring: OpaquePointer) -> Int { 0 }
    static func sendRingQueue(_ ring: OpaquePointer, fd: Int32, _ bytes: UnsafeRawBufferPointer, tag: UInt64) -> Bool { false }
    static func sendRingSubmitAndWait(_ ring: OpaquePointer) -> Int32 { -ENOSYS }
    static func sendRingNextCompletion(_ ring: OpaquePointer) -> (tag: UInt64, result: Int32)? { nil }

    // MARK: processors and threads

    /// Darwin has no CPU-affinity masks for processes; the online processor count.
    static func availableProcessorCount() -> Int {
        max(1, Int(sysconf(_SC_NPROCESSORS_ONLN)))
    }
}
#endif
