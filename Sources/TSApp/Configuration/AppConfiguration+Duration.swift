extension AppConfiguration {
    /// Parses a `.duration` setting: a non-negative integer and a unit, `ms`, `s`, `m`, `h` or `d`
    /// ("250ms", "30s", "5m", "12h", "30d"). nil for anything else (the setting is then refused).
    public static func parseDuration(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (unit, millis) in units where text.hasSuffix(unit) {
            let number = text.dropLast(unit.count)
            // "ms" is checked before "s" and "m": "250ms" is never read as 250m + "s".
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(number),
                  n <= Int64.max / millis / 1_000_000 else { return nil }
            return .milliseconds(n * millis)
        }
        return nil
    }
}
