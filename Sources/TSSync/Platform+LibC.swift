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
/// integer and its start routine takes an optional pointer; Darwin's is a non-optional pointer
/// and its routine a non-optional argument. Returns pthread_create's result and the thread.
public func platformThreadCreate(stackSize: Int, detached: Bool = false, argument: UnsafeMutableRawPointer,
                                 _ body: @convention(c) (UnsafeMutableRawPointer) -> Void) -> (code: Int32, thread: pthread_t?) {
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    defer { pthread_attr_destroy(&attr) }
    pthread_attr_setstacksize(&attr, stackSize)
    if detached { pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED)) }
    // The routine and its argument travel together in one heap pair, unpacked by a capture-free trampoline.
    let pair = UnsafeMutablePointer<(@convention(c) (UnsafeMutableRawPointer) -> Void, UnsafeMutableRawPointer)>.allocate(capacity: 1)
    pair.initialize(to: (body, argument))
    #if canImport(Glibc)
    var tid = pthread_t()
    let rc = pthread_create(&tid, &attr, { raw in
        let p = raw!.assumingMemoryBound(to: (@convention(c) (UnsafeMutableRawPointer) -> Void, UnsafeMutableRawPointer).self)
        let (f, a) = p.move()
        p.deallocate()
        f(a)
        return nil
    }, pair)
    if rc != 0 { pair.deinitialize(count: 1); pair.deallocate() }
    return (rc, rc == 0 ? tid : nil)
    #else
    var tid: pthread_t? = nil
    let rc = pthread_create(&tid, &attr, { raw in
        let p = raw.assumingMemoryBound(to: (@convention(c) (UnsafeMutableRawPointer) -> Void, UnsafeMutableRawPointer).self)
        let (f, a) = p.move()
        p.deallocate()
        f(a)
        return nil
    }, pair)
    if rc != 0 { pair.deinitialize(count: 1); pair.deallocate() }
    return (rc, rc == 0 ? tid : nil)
    #endif
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
