// The Swift half of the stand-in `Darwin` module that scripts/check-darwin-typecheck compiles the
// Darwin-only files against on Linux (docs/macos.md). It re-exports the C declarations of
// DarwinStandIn.h and adds what the real Darwin overlay adds in Swift.
@_exported import CDarwinStandIn

/// The real overlay's `errno` (swift/stdlib/public/Platform/Platform.swift): C's `errno` is the
/// macro `(*__error())` on Darwin (<sys/errno.h>), which Swift cannot import, so the overlay
/// wraps `__error()` in a settable variable.
public var errno: Int32 {
    get { __error().pointee }
    set { __error().pointee = newValue }
}

/// The overlay's non-variadic `fcntl` (swift/stdlib/public/Platform/Platform.swift).
public func fcntl(_ fd: Int32, _ cmd: Int32) -> Int32 { darwin_standin_fcntl(fd, cmd, 0) }
public func fcntl(_ fd: Int32, _ cmd: Int32, _ value: Int32) -> Int32 { darwin_standin_fcntl(fd, cmd, value) }

/// The overlay's non-variadic `open` (same file); `mode_t` is UInt16 on Darwin (bsd/sys/_types.h).
public func open(_ path: UnsafePointer<CChar>, _ oflag: Int32) -> Int32 { darwin_standin_open(path, oflag, 0) }
public func open(_ path: UnsafePointer<CChar>, _ oflag: Int32, _ mode: UInt16) -> Int32 { darwin_standin_open(path, oflag, mode) }

// Libc include/_time.h defines `CLOCK_REALTIME` etc. as macros naming enumerators of the enum
// `clockid_t`; Swift code on a Mac uses them as `clockid_t` values (`clock_gettime(CLOCK_MONOTONIC, &ts)`).
// This toolchain's importer does not import a macro that names an enumerator, so they are spelled
// out here with the same type and values (docs/macos.md, "what the stand-in cannot model").
public var CLOCK_REALTIME: clockid_t { _CLOCK_REALTIME }
public var CLOCK_MONOTONIC: clockid_t { _CLOCK_MONOTONIC }
public var CLOCK_MONOTONIC_RAW: clockid_t { _CLOCK_MONOTONIC_RAW }
public var CLOCK_UPTIME_RAW: clockid_t { _CLOCK_UPTIME_RAW }

/// xnu bsd/sys/signal.h: `#define SIG_IGN (void (*)(int))1`; the real overlay defines it in Swift
/// (swift/stdlib/public/Platform/Platform.swift) as the function pointer with address 1.
public var SIG_IGN: sig_t { unsafeBitCast(1, to: sig_t.self) }
