/// The units lower layers count time in, from a `.duration` setting. The settings are `Duration`s
/// so that no caller multiplies seconds into nanoseconds by hand.
extension Duration {
    /// Whole nanoseconds (`HTTPServerConfiguration`'s timeouts, the TLS handshake bound); a negative
    /// duration is 0, one past `UInt64` the largest.
    var settingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflowSum ? .max : sum
    }

    /// Whole milliseconds, clamped to `Int` (Engine.IO's ping times, SQLite's busy timeout, APNs).
    var settingMilliseconds: Int {
        let (seconds, attoseconds) = components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowSum ? .max : Int(clamping: sum)
    }

    /// Whole seconds (token lifetimes and windows, which the domain counts in seconds).
    var settingSeconds: Int64 { components.seconds }
}
