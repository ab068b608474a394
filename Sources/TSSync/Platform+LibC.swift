// The C library, re-exported: every module above TSSync (and every file in it) sees the POSIX
// API under one name on Linux (Glibc) and Darwin. This is the only `import Glibc`/`import Darwin`
// outside the platform layer in TSSockets (Platform+*.swift, Poller+*.swift); what differs
// between the two systems lives there, not here.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif
#if canImport(Glibc)
import CSystem
#endif

// The few POSIX types whose Swift shape differs between Glibc and Darwin, named once here so no
// other file needs `#if`.

/// `posix_spawnattr_t` as `posix_spawnattr_init` takes it: a struct on Glibc, an optional opaque
/// pointer on Darwin (<spawn.h>).
#if canImport(Glibc)
public typealias PlatformSpawnAttributes = posix_spawnattr_t
/// An uninitialised value for `posix_spawnattr_init`.
public func platformSpawnAttributes() -> PlatformSpawnAttributes { posix_spawnattr_t() }
#else
public typealias PlatformSpawnAttributes = posix_spawnattr_t?
/// An uninitialised value for `posix_spawnattr_init`.
public func platformSpawnAttributes() -> PlatformSpawnAttributes { nil }
#endif

/// `pthread_create` (POSIX.1-2017) of a joinable (or, with `detached`, a detached) thread with a
/// `stackSize`-byte stack running
/// `body(argument)`. `body` may not capture (it is a C function pointer). Glibc's `pthread_t` is an
/// integer, Darwin's a pointer that pthread_create writes through `pthread_t?`. The start routine's
/// argument imports as Optional on Glibc and in Darwin's <pthread.h> as Swift 6 reads it, and as
/// non-optional in that header's older shape (`_PTHREAD_SWIFT_IMPORTER_NULLABILITY_COMPAT`); the
/// trampoline widens it to Optional first, which compiles with either. Returns pthread_create's
/// result and the thread.
public func platformThreadCreate(stackSize: Int, detached: Bool = false, argument: UnsafeMutableRawPointer,
                                 _ body: @convention(c) (UnsafeMutableRawPointer) -> Void) -> (code: Int32, thread: pthread_t?) {
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    defer { pthread_attr_destroy(&attr) }
    pthread_attr_setstacksize(&attr, stackSize)
    // The routine and its argument travel together in one heap pair, unpacked by a capture-free trampoline.
    let pair = UnsafeMutablePointer<ThreadStart>.allocate(capacity: 1)
    pair.initialize(to: ThreadStart(body: body, argument: argument))
    #if canImport(Glibc)
    var tid = pthread_t()
    #else
    var tid: pthread_t? = nil
    #endif
    let rc = pthread_create(&tid, &attr, { raw in
        // Widened to Optional first, so the same line compiles whether `raw` imports as Optional or not.
        let start = (raw as UnsafeMutableRawPointer?)!
        ThreadStart.run(start)
        return nil
    }, pair)
    if rc != 0 {
        pair.deinitialize(count: 1)
        pair.deallocate()
        return (rc, nil)
    }
    let thread: pthread_t? = tid
    // Detached after the start (it may even have finished): its resources go back when it ends.
    if detached, let thread { pthread_detach(thread) }
    return (rc, thread)
}

/// What `platformThreadCreate`'s trampoline runs: the C routine and its argument, on the heap.
struct ThreadStart {
    let body: @convention(c) (UnsafeMutableRawPointer) -> Void
    let argument: UnsafeMutableRawPointer

    /// Takes the pair out of `raw` (freeing it) and runs the routine on this thread.
    static func run(_ raw: UnsafeMutableRawPointer) {
        let p = raw.assumingMemoryBound(to: ThreadStart.self)
        let start = p.move()
        p.deallocate()
        start.body(start.argument)
    }
}

/// Names the calling thread (`pthread_setname_np(3)`; at most 15 bytes on Linux, checked by
/// `SpawnedThread`). Glibc declares it only under _GNU_SOURCE, hence the CSystem wrapper; Darwin's
/// takes only a name, for the calling thread.
public func platformNameCurrentThread(_ name: String) {
    #if canImport(Glibc)
    _ = ts_set_thread_name(name)
    #else
    _ = pthread_setname_np(name)
    #endif
}

/// The operating system this build is for, so that the few choices above the platform layer that
/// depend on it (TSStorage's durability pragmas) are made from a value, not from an `#if` of their own.
public enum OperatingSystem: Sendable, Equatable {
    case linux
    case darwin

    /// The system this binary was compiled for.
    public static var current: OperatingSystem {
        #if canImport(Darwin)
        return .darwin
        #else
        return .linux
        #endif
    }
}
