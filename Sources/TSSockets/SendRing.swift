import Logging

/// Whether the event loops submit the sends of one flush through io_uring (setting `server.ioUring`).
public enum IORingMode: String, Sendable, CaseIterable, EnvironmentOverridable {
    /// io_uring where the kernel offers it (Linux; checked once per loop, with a log line and
    /// send(2) when it is refused), unless `TOUCHSYNC_SERVER_IO_URING=off` is in the environment.
    case auto
    /// One send(2) per connection.
    case off

    /// The environment variable `auto` consults (the `server.ioUring` setting's own name), so
    /// every loop a process creates — test servers included — can be switched to send(2).
    public static let environmentVariable = "TOUCHSYNC_SERVER_IO_URING"

    /// `auto` resolved: `.off` when the environment says off, else `.auto`.
    public var resolved: IORingMode {
        guard self == .auto else { return self }
        return Self.environmentOverride ?? .auto
    }
}

/// How an event loop's flushes reached the kernel (for tests and the bench): loop-local counts,
/// read with `EventLoop.sendCounters()`.
public struct SendCounters: Sendable, Equatable {
    /// io_uring_enter(2) submissions of batched sends.
    public var ringSubmissions = 0
    /// Sends submitted through the ring (one per connection per submission).
    public var ringSends = 0
    /// Ring sends that completed short or with EAGAIN (the rest waited for EPOLLOUT).
    public var ringShortSends = 0
    /// send(2) calls of the per-connection path.
    public var plainSends = 0
    public init() {}
}

/// One io_uring of one event loop, over CSystem's `ts_uring_*` (raw io_uring_setup/enter on the
/// kernel's <linux/io_uring.h>; `Platform.makeSendRing`). Sends are IORING_OP_SEND with
/// MSG_DONTWAIT | MSG_NOSIGNAL: each completes during the submit, a full socket with EAGAIN
/// (checked on this kernel when the ring is made). Loop thread only (not Sendable).
final class SendRing {
    private let ring: OpaquePointer
    /// Sends that can be queued per submission.
    let capacity: Int

    /// A ring of `entries` slots, or nil with `failure` saying why (ENOSYS, EPERM under a seccomp
    /// profile, no nonblocking send on this kernel, or a build without io_uring).
    init?(entries: Int, failure: inout String?) {
        let made = Platform.makeSendRing(entries: entries)
        guard let ring = made.ring else {
            failure = made.failure
            return nil
        }
        self.ring = ring
        capacity = Platform.sendRingCapacity(ring)
    }

    deinit { Platform.destroySendRing(ring) }

    /// Queues one send of `bytes` (which must stay valid until `submitAndWait` returns); false
    /// when `capacity` sends are queued.
    func queue(fd: Int32, _ bytes: UnsafeRawBufferPointer, tag: UInt64) -> Bool {
        Platform.sendRingQueue(ring, fd: fd, bytes, tag: tag)
    }

    /// Submits every queued send in one io_uring_enter(2) and waits for their completions (they
    /// complete during the submit). Returns how many completions are ready, or -errno (sends the
    /// kernel did not take are withdrawn and get no completion).
    func submitAndWait() -> Int32 { Platform.sendRingSubmitAndWait(ring) }

    /// The next completion: the send's tag and its result (bytes sent, or -errno).
    func nextCompletion() -> (tag: UInt64, result: Int32)? { Platform.sendRingNextCompletion(ring) }
}
