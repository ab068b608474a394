
/// A monotonic time source in nanoseconds. Everything with a timeout takes one, so tests can use
/// `ManualClock` instead of sleeping.
public protocol MonotonicClock: Sendable {
    /// Nanoseconds since an arbitrary, fixed origin. Never decreases.
    func now() -> UInt64
}

/// CLOCK_MONOTONIC.
public struct SystemClock: MonotonicClock {
    public init() {}
    public func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// A clock that only moves when told to. Thread-safe.
// @unchecked Sendable: `current` is only read or written while holding `lock`.
public final class ManualClock: MonotonicClock, @unchecked Sendable {
    private let lock = Mutex()
    private var current: UInt64

    public init(start: UInt64 = 1_000_000_000) { current = start }

    public func now() -> UInt64 { lock.withLock { current } }

    /// Moves the clock forward by `nanoseconds`.
    public func advance(by nanoseconds: UInt64) {
        lock.withLock { current &+= nanoseconds }
    }

    /// Sets the clock to `nanoseconds` (must not go backwards).
    public func set(_ nanoseconds: UInt64) {
        lock.withLock { current = max(current, nanoseconds) }
    }
}

/// Convenience conversions.
public enum Nanoseconds {
    public static func milliseconds(_ ms: UInt64) -> UInt64 { ms &* 1_000_000 }
    public static func seconds(_ s: UInt64) -> UInt64 { s &* 1_000_000_000 }
}
