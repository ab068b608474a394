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
