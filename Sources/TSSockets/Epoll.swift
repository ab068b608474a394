#if canImport(Glibc)
import Glibc
#endif

/// epoll(7), eventfd(2) and accept4(2) bindings.
///
/// Swift's Glibc module map does not include <sys/epoll.h> or <sys/eventfd.h>, and this package
/// may not add a C shim target, so the four functions are resolved with dlsym(3) and called through
/// correctly typed `@convention(c)` pointers (ABI-exact). `struct epoll_event` is laid out by hand:
/// packed (12 bytes) on x86_64, naturally aligned (16 bytes) elsewhere — as in the kernel headers.
enum Epoll {
    static let IN: UInt32 = 0x001
    static let PRI: UInt32 = 0x002
    static let OUT: UInt32 = 0x004
    static let ERR: UInt32 = 0x008
    static let HUP: UInt32 = 0x010
    static let RDHUP: UInt32 = 0x2000

    static let CTL_ADD: Int32 = 1
    static let CTL_DEL: Int32 = 2
    static let CTL_MOD: Int32 = 3
    static let CLOEXEC: Int32 = 0o2000000
    static let EFD_CLOEXEC: Int32 = 0o2000000
    static let EFD_NONBLOCK: Int32 = 0o4000

    #if arch(x86_64)
    static let eventSize = 12
    static let dataOffset = 4
    #else
    static let eventSize = 16
    static let dataOffset = 8
    #endif

    private typealias CreateFn = @convention(c) (Int32) -> Int32
    private typealias CtlFn = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias WaitFn = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    private typealias EventFDFn = @convention(c) (UInt32, Int32) -> Int32

    private static func symbol<T>(_ name: String, as: T.Type) -> T {
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("libc symbol \(name) not found")
        }
        return unsafeBitCast(p, to: T.self)
    }

    typealias Accept4Fn = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
    /// accept4(2) is behind _GNU_SOURCE, which Swift's Glibc module does not expose.
    static let accept4 = symbol("accept4", as: Accept4Fn.self)

    typealias SchedGetaffinityFn = @convention(c) (Int32, Int, UnsafeMutableRawPointer?) -> Int32
    /// sched_getaffinity(2) is behind _GNU_SOURCE too (used to size event-loop groups).
    static let schedGetaffinity = symbol("sched_getaffinity", as: SchedGetaffinityFn.self)

    private static let createFn = symbol("epoll_create1", as: CreateFn.self)
    private static let ctlFn = symbol("epoll_ctl", as: CtlFn.self)
    private static let waitFn = symbol("epoll_wait", as: WaitFn.self)
    private static let eventfdFn = symbol("eventfd", as: EventFDFn.self)

    static func create() -> Int32 { createFn(CLOEXEC) }

    static func eventfd() -> Int32 { eventfdFn(0, EFD_CLOEXEC | EFD_NONBLOCK) }

    /// epoll_ctl(2) with an event built from `events` and `data`.
    static func ctl(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32, data: UInt64) -> Int32 {
        var raw: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &raw) { buf in
            buf.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            buf.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
            return ctlFn(epfd, op, fd, buf.baseAddress)
        }
    }

    /// epoll_wait(2) into `buffer`, which holds `maxEvents * eventSize` bytes.
    static func wait(_ epfd: Int32, _ buffer: UnsafeMutableRawPointer, _ maxEvents: Int32, _ timeout: Int32) -> Int32 {
        waitFn(epfd, buffer, maxEvents, timeout)
    }

    static func event(at index: Int, in buffer: UnsafeMutableRawPointer) -> (events: UInt32, data: UInt64) {
        let base = buffer + index * eventSize
        return (base.loadUnaligned(as: UInt32.self), base.loadUnaligned(fromByteOffset: dataOffset, as: UInt64.self))
    }
}
