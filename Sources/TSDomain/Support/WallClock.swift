import TSSync

/// Wall-clock time for timestamps the API shows. Injected so tests and demo data are reproducible.
public protocol WallClock: Sendable {
    /// Seconds since the Unix epoch.
    func nowSeconds() -> Int64
    /// Microseconds since the Unix epoch (orders events within one second).
    func nowMicroseconds() -> Int64
}

public struct SystemWallClock: WallClock {
    public init() {}
    public func nowSeconds() -> Int64 { nowMicroseconds() / 1_000_000 }
    public func nowMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

/// Test mode's movable clock (`/api/test/clock`): another wall clock (the system's) plus an offset
/// a test sets, so token expiry, `createdAt`, notification pruning and rate-limit buckets can be
/// tested without waiting. Only domain time reads it: the Engine.IO heartbeats and every other
/// timer run on the monotonic clock and never move.
public final class MovableWallClock: WallClock {
    private let base: any WallClock
    private let offset = LockedValue<Int64>(0)

    public init(base: any WallClock = SystemWallClock()) { self.base = base }

    /// Microseconds added to the base clock (negative: in the past).
    public var offsetMicroseconds: Int64 { offset.withLock { $0 } }

    public func nowSeconds() -> Int64 { nowMicroseconds() / 1_000_000 }
    public func nowMicroseconds() -> Int64 { base.nowMicroseconds() + offsetMicroseconds }

    /// Moves time forward (or back, with a negative value) by `microseconds`.
    public func advance(byMicroseconds microseconds: Int64) { offset.withLock { $0 += microseconds } }

    /// Makes "now" read `microseconds` since the Unix epoch (time keeps running from there).
    public func set(nowMicroseconds microseconds: Int64) {
        let real = base.nowMicroseconds()
        offset.withLock { $0 = microseconds - real }
    }

    /// Back to the base clock.
    public func reset() { offset.withLock { $0 = 0 } }

    /// Takes another node's offset (a cluster moves every node's clock alike).
    public func set(offsetMicroseconds microseconds: Int64) { offset.withLock { $0 = microseconds } }
}
