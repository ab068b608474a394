import TSSync

/// Renders Unix seconds as the contract's dates: ISO 8601 UTC with second precision
/// (`2024-01-15T10:00:00Z`), which Swift's `.iso8601` date decoding accepts (no fractional seconds: it refuses them).
public enum Timestamp {
    public static func iso8601(_ seconds: Int64) -> String {
        let t = civil(seconds)
        guard (0...9999).contains(t.year) else {
            return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))Z"
        }
        // The 20 bytes written in place: one String allocation per timestamp.
        return String(unsafeUninitializedCapacity: 20) { b in write20(t, into: b) }
    }

    /// The 20 bytes of `YYYY-MM-DDTHH:MM:SSZ` for a year in 0...9999, written into `b` (≥ 20 bytes).
    static func write20(_ t: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int),
                        into b: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(b.count >= 20, "20 bytes for a timestamp")
        let p = b.baseAddress!
        // Unchecked digit arithmetic on the base pointer (every field is 0...99 here): checked
        // conversions through the buffer cost about a hundred instructions per pair.
        @inline(__always) func two(_ v: Int, _ at: Int) {
            let tens = v / 10
            p[at] = UInt8(truncatingIfNeeded: 48 &+ tens)
            p[at &+ 1] = UInt8(truncatingIfNeeded: 48 &+ v &- tens &* 10)
        }
        two(t.year / 100, 0); two(t.year % 100, 2); b[4] = 0x2D
        two(t.month, 5); b[7] = 0x2D; two(t.day, 8); b[10] = 0x54
        two(t.hour, 11); b[13] = 0x3A; two(t.minute, 14); b[16] = 0x3A; two(t.second, 17); b[19] = 0x5A
        return 20
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// A new room's default name: its creation date and time in UTC, e.g. `Nov 22, 2026 10:04`.
    public static func roomName(_ seconds: Int64) -> String {
        let t = civil(seconds)
        return "\(months[t.month - 1]) \(t.day), \(t.year) \(pad(t.hour, 2)):\(pad(t.minute, 2))"
    }

    /// Parses the ISO 8601 form produced by `iso8601` (used by fixtures).
    public static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r { guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }; v = v * 10 + Int(b[i] - 0x30) }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13), let mi = num(14..<16), let s = num(17..<19),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var tmv = tm()
        tmv.tm_year = Int32(y - 1900); tmv.tm_mon = Int32(mo - 1); tmv.tm_mday = Int32(d)
        tmv.tm_hour = Int32(h); tmv.tm_min = Int32(mi); tmv.tm_sec = Int32(s)
        return Int64(timegm(&tmv))
    }

    /// UTC calendar fields by integer arithmetic (H. Hinnant's `civil_from_days`): no libc time-zone
    /// conversion on the per-timestamp path.
    static func civil(_ seconds: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var days = seconds / 86_400
        var rem = seconds % 86_400
        if rem < 0 { rem += 86_400; days -= 1 }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day), Int(rem / 3600), Int(rem % 3600 / 60), Int(rem % 60))
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
