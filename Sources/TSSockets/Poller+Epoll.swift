#if canImport(Glibc)
import Glibc
import CSystem

/// epoll(7), level-triggered (no EPOLLET), with an eventfd(2) for the cross-thread wake-up.
/// `struct epoll_event` comes from <sys/epoll.h> through the CSystem shim (packed on x86_64, as
/// the kernel lays it out); the registration token is its `data.u64`, and token 0 is the eventfd.
final class EpollPoller: Poller {
    let kind = PollerKind.epoll
    private let epfd: Int32
    private let wakeFD: Int32
    private let buffer: UnsafeMutableBufferPointer<epoll_event>

    init(maxEvents: Int = 256) throws {
        let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
        if ep < 0 { throw SocketError.current("epoll_create1") }
        let efd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        if efd < 0 {
            let e = SocketError.current("eventfd")
            _ = Glibc.close(ep)
            throw e
        }
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.u64 = 0
        if epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) != 0 {
            let e = SocketError.current("epoll_ctl")
            Platform.closeIgnoringErrors(ep, efd)
            throw e
        }
        epfd = ep
        wakeFD = efd
        buffer = .allocate(capacity: maxEvents)
        buffer.initialize(repeating: epoll_event())
    }

    deinit { buffer.deallocate() }

    @inline(__always)
    private static func mask(_ interest: PollerEvents) -> UInt32 {
        var m: UInt32 = 0
        if interest.contains(.readable) { m |= EPOLLIN.rawValue }
        if interest.contains(.writable) { m |= EPOLLOUT.rawValue }
        return m
    }

    private func control(_ op: Int32, _ fd: Int32, _ token: UInt64, _ interest: PollerEvents) throws {
        var ev = epoll_event()
        ev.events = Self.mask(interest)
        ev.data.u64 = token
        if epoll_ctl(epfd, op, fd, &ev) != 0 { throw SocketError.current("epoll_ctl") }
    }

    func add(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        try control(EPOLL_CTL_ADD, fd, token, interest)
    }

    func modify(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        try control(EPOLL_CTL_MOD, fd, token, interest)
    }

    func remove(fd: Int32, token: UInt64) {
        var ev = epoll_event()  // ignored by EPOLL_CTL_DEL, but kernels before 2.6.9 required it
        _ = epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev)
    }

    func wait(timeoutMilliseconds: Int32, into events: UnsafeMutableBufferPointer<PollerEvent>) throws -> Int {
        let capacity = Int32(min(buffer.count, events.count))
        let n = epoll_wait(epfd, buffer.baseAddress, capacity, timeoutMilliseconds)
        if n < 0 {
            if errno == EINTR { return 0 }
            throw SocketError.current("epoll_wait")
        }
        var count = 0
        for i in 0..<Int(n) {
            let ev = buffer[i]
            let token = ev.data.u64
            if token == 0 {
                var value: UInt64 = 0
                _ = Glibc.read(wakeFD, &value, 8)
                continue
            }
            let ready = PollerEvents(readable: ev.events & EPOLLIN.rawValue != 0, writable: ev.events & EPOLLOUT.rawValue != 0,
                                     hangup: ev.events & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0,
                                     error: ev.events & EPOLLERR.rawValue != 0)
            events[count] = PollerEvent(token: token, events: ready)
            count += 1
        }
        return count
    }

    func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    func close() { Platform.closeIgnoringErrors(epfd, wakeFD) }
}
#endif
