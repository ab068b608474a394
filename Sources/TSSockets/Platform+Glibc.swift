#if canImport(Glibc)
import Glibc
import CSystem

/// The Linux (glibc) half of the platform layer (Platform.swift); `Platform+Darwin.swift` has
/// the same members for macOS.
extension Platform {
    /// The readiness backend `PollerKind.auto` means here.
    public static let defaultPoller = PollerKind.epoll

    /// The system's own readiness backend (`makePoller`).
    static func makeSystemPoller() throws -> any Poller { try EpollPoller() }

    // MARK: sockets

    /// socket(2): a non-blocking, close-on-exec TCP socket in one call (SOCK_STREAM is an enum
    /// on glibc, hence `.rawValue`). -1 with errno on failure.
    static func makeStreamSocket(family: Int32) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return Glibc.socket(family, type, 0)
    }

    /// accept4(2): the accepted socket is non-blocking and close-on-exec. -1 with errno on failure.
    static func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        ts_accept4_nonblock_cloexec(fd, address, length)
    }
    /// The syscall name reported with `accept`'s errno.
    static let acceptCallName = "accept4"

    /// Flags for send(2): MSG_NOSIGNAL, so a closed peer gives EPIPE instead of SIGPIPE.
    static let sendFlags = Int32(MSG_NOSIGNAL)

    /// glibc's `sockaddr_in` and `sockaddr_in6` have no length field.
    static func setLength(of address: inout sockaddr_in) {}
    static func setLength(of address: inout sockaddr_in6) {}

    // MARK: batched sends (io_uring)

    /// io_uring_setup(2) of a ring with `entries` send slots (CSystem's `ts_uring_create`), and
    /// the check that a MSG_DONTWAIT send to a full socket completes at once with EAGAIN. Returns
    /// the ring, or nil and why not (the system call and errno, for the log line).
    static func makeSendRing(entries: Int) -> (ring: OpaquePointer?, failure: String?) {
        var error: Int32 = 0
        guard let ring = ts_uring_create(UInt32(entries), &error) else {
            return (nil, "io_uring_setup: \(String(cString: strerror(error))) (errno \(error))")
        }
        let probe = ts_uring_probe_nonblocking_send(ring)
        if probe != 0 {
            ts_uring_destroy(ring)
            return (nil, probe > 0
                ? "a MSG_DONTWAIT IORING_OP_SEND to a full socket waited instead of completing with EAGAIN"
                : "IORING_OP_SEND check: \(String(cString: strerror(-probe))) (errno \(-probe))")
        }
        return (ring, nil)
    }
    static func destroySendRing(_ ring: OpaquePointer) { ts_uring_destroy(ring) }
    static func sendRingCapacity(_ ring: OpaquePointer) -> Int { Int(ts_uring_capacity(ring)) }
    /// Queues one send (MSG_DONTWAIT | MSG_NOSIGNAL); false when the ring is full.
    static func sendRingQueue(_ ring: OpaquePointer, fd: Int32, _ bytes: UnsafeRawBufferPointer, tag: UInt64) -> Bool {
        ts_uring_queue_send(ring, fd, bytes.baseAddress, UInt32(bytes.count), tag) == 0
    }
    /// Submits the queued sends in one io_uring_enter(2) and waits for their completions: how
    /// many are ready, or -errno.
    static func sendRingSubmitAndWait(_ ring: OpaquePointer) -> Int32 { ts_uring_submit_and_wait(ring) }
    /// The next completion: its tag and result (bytes sent, or -errno).
    static func sendRingNextCompletion(_ ring: OpaquePointer) -> (tag: UInt64, result: Int32)? {
        var tag: UInt64 = 0
        var result: Int32 = 0
        guard ts_uring_next_completion(ring, &tag, &result) == 1 else { return nil }
        return (tag, result)
    }

    // MARK: processors and threads

    /// CPUs this process may run on: the sched_getaffinity(2) mask (Linux only), so `taskset -c 0`
    /// or a cpuset gives one loop per usable core; the online count if that fails.
    static func availableProcessorCount() -> Int {
        let n = ts_sched_cpu_count()
        if n > 0 { return Int(n) }
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
#endif
