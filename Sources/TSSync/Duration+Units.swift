/// The whole units clocks, timers and system calls count time in. Configurations hold `Duration`s
/// and convert with these where a clock is read, a timer armed or a call made, never by hand
/// (`* 1_000_000`) on the way there.
extension Duration {
    /// Whole nanoseconds, for a monotonic clock or an event-loop timer: a negative duration is 0,
    /// one past `UInt64` the largest.
    public var clockNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflowSum ? .max : sum
    }

    /// Whole milliseconds (rounded toward zero), clamped to `Int`: what a protocol field or a C
    /// call in milliseconds takes (Engine.IO's open packet, SQLite's busy timeout, curl's timeout).
    public var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowSum ? .max : Int(clamping: sum)
    }

    /// Whole seconds (rounded toward zero), for arithmetic on Unix times in seconds (a token's
    /// `exp`, a notification's age).
    public var wholeSeconds: Int64 { components.seconds }
}
