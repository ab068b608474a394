#if canImport(Darwin)
import Darwin

// Never compiled on a Mac by us: scripts/check-darwin-typecheck type-checks it on Linux against a
// stand-in <sys/event.h> written from xnu's, and the CI's macos-15 job builds and runs it
// (docs/macos.md). The poll(2) backend, which runs the same event loop on Linux in ./scripts/test,
// covers the logic above the poller.

/// kevent(2), bound once by its function type. <sys/event.h> names a struct and a function
/// `kevent`; a module-qualified `Darwin.kevent(...)` finds only the struct (its memberwise
/// initializer) and does not compile, and the unqualified name is ambiguous as a value, so the
/// function is taken here by its exact type (as swift-nio's System.swift does) and called as
/// `sysKevent`. `kevent(ident:…)` and `kevent()` below are the struct.
private let sysKevent: @convention(c) (Int32, UnsafePointer<kevent>?, Int32, UnsafeMutablePointer<kevent>?, Int32,
                                       UnsafePointer<timespec>?) -> Int32 = kevent

/// kqueue(2), level-triggered (no EV_CLEAR on descriptors), with an EVFILT_USER event for the
/// cross-thread wake-up. A descriptor is two kevents (EVFILT_READ and EVFILT_WRITE), both added at
/// registration and enabled or disabled by interest; the registration token rides in `udata`.
///
/// Types, from <sys/event.h>: `struct kevent { uintptr_t ident; int16_t filter; uint16_t flags;
/// uint32_t fflags; intptr_t data; void *udata; }`; EVFILT_* are negative `int` macros (imported
/// as Int32, narrowed to Int16), EV_* are `uint16_t`-sized `int` macros (narrowed to UInt16),
/// NOTE_TRIGGER is an `int` macro (widened to UInt32).
final class KQueuePoller: Poller {
    let kind = PollerKind.kqueue
    private let kq: Int32
    /// `ident` of the EVFILT_USER wake-up event (its own namespace, apart from descriptors).
    private static let wakeIdent: UInt = 1
    private let buffer: UnsafeMutableBufferPointer<kevent>

    init(maxEvents: Int = 256) throws {
        let q = kqueue()
        if q < 0 { throw SocketError.current("kqueue") }
        if fcntl(q, F_SETFD, FD_CLOEXEC) < 0 {
            let e = SocketError.current("fcntl")
            _ = Darwin.close(q)
            throw e
        }
        var wake = kevent(ident: Self.wakeIdent, filter: Int16(EVFILT_USER),
                          flags: UInt16(EV_ADD | EV_CLEAR), fflags: 0, data: 0, udata: nil)
        if sysKevent(q, &wake, 1, nil, 0, nil) < 0 {
            let e = SocketError.current("kevent")
            _ = Darwin.close(q)
            throw e
        }
        kq = q
        buffer = .allocate(capacity: maxEvents)
        buffer.initialize(repeating: kevent())
    }

    deinit { buffer.deallocate() }

    /// EV_ADD (adds, or updates an existing filter's flags and udata) with EV_ENABLE or EV_DISABLE
    /// for each of the two filters.
    private func apply(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        let udata = UnsafeMutableRawPointer(bitPattern: UInt(token))
        let read = UInt16(EV_ADD | (interest.contains(.readable) ? EV_ENABLE : EV_DISABLE))
        let write = UInt16(EV_ADD | (interest.contains(.writable) ? EV_ENABLE : EV_DISABLE))
        var changes = (
            kevent(ident: UInt(fd), filter: Int16(EVFILT_READ), flags: read, fflags: 0, data: 0, udata: udata),
            kevent(ident: UInt(fd), filter: Int16(EVFILT_WRITE), flags: write, fflags: 0, data: 0, udata: udata)
        )
        let rc = withUnsafePointer(to: &changes) { p in
            p.withMemoryRebound(to: kevent.self, capacity: 2) { sysKevent(kq, $0, 2, nil, 0, nil) }
        }
        if rc < 0 { throw SocketError.current("kevent") }
    }

    func add(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        try apply(fd: fd, token: token, interest: interest)
    }

    func modify(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        try apply(fd: fd, token: token, interest: interest)
    }

    func remove(fd: Int32, token: UInt64) {
        var changes = (
            kevent(ident: UInt(fd), filter: Int16(EVFILT_READ), flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil),
            kevent(ident: UInt(fd), filter: Int16(EVFILT_WRITE), flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil)
        )
        _ = withUnsafePointer(to: &changes) { p in
            p.withMemoryRebound(to: kevent.self, capacity: 2) { sysKevent(kq, $0, 2, nil, 0, nil) }
        }
    }

    func wait(timeoutMilliseconds: Int32, into events: UnsafeMutableBufferPointer<PollerEvent>) throws -> Int {
        let capacity = Int32(min(buffer.count, events.count))
        let n: Int32
        if timeoutMilliseconds < 0 {
            n = sysKevent(kq, nil, 0, buffer.baseAddress, capacity, nil)
        } else {
            var ts = timespec(tv_sec: Int(timeoutMilliseconds / 1000), tv_nsec: Int(timeoutMilliseconds % 1000) * 1_000_000)
            n = sysKevent(kq, nil, 0, buffer.baseAddress, capacity, &ts)
        }
        if n < 0 {
            if Darwin.errno == EINTR { return 0 }
            throw SocketError.current("kevent")
        }
        var count = 0
        for i in 0..<Int(n) {
            let ev = buffer[i]
            if ev.filter == Int16(EVFILT_USER) { continue }  // the wake-up (EV_CLEAR re-arms it)
            let token = UInt64(UInt(bitPattern: ev.udata))
            let eof = ev.flags & UInt16(EV_EOF) != 0
            let ready = PollerEvents(readable: ev.filter == Int16(EVFILT_READ), writable: ev.filter == Int16(EVFILT_WRITE),
                                     hangup: eof,
                                     error: (eof && ev.fflags != 0) || ev.flags & UInt16(EV_ERROR) != 0)  // with EV_EOF, fflags holds the socket error
            events[count] = PollerEvent(token: token, events: ready)
            count += 1
        }
        return count
    }

    func wakeUp() {
        var trigger = kevent(ident: Self.wakeIdent, filter: Int16(EVFILT_USER), flags: 0,
                             fflags: UInt32(NOTE_TRIGGER), data: 0, udata: nil)
        _ = sysKevent(kq, &trigger, 1, nil, 0, nil)
    }

    func close() {
        _ = Darwin.close(kq)
    }
}
#endif
