/// Failed-login throttling (CONTRACT.md §0: 429 `RATE_LIMITED` with `Retry-After`): after
/// `maxFailures` failures for one key (a username, a client address) within `windowSeconds`, that
/// key is refused until the window has passed since its first failure. A success clears the key.
/// Bounded: past `maxKeys` tracked keys the oldest are forgotten. Pure state; callers lock.
public struct LoginThrottle: Sendable {
    public let maxFailures: Int
    public let windowSeconds: Int64
    public let maxKeys: Int
    private var failures: [String: (first: Int64, count: Int)] = [:]

    public init(maxFailures: Int = 10, windowSeconds: Int64 = 300, maxKeys: Int = 10_000) {
        self.maxFailures = maxFailures
        self.windowSeconds = windowSeconds
        self.maxKeys = maxKeys
    }

    /// Seconds until `key` may try again, or nil when it may try now.
    public func retryAfter(_ key: String, now: Int64) -> Int64? {
        guard maxFailures > 0, let f = failures[key], f.count >= maxFailures else { return nil }
        let wait = f.first + windowSeconds - now
        return wait > 0 ? wait : nil
    }

    public mutating func recordFailure(_ key: String, now: Int64) {
        if let f = failures[key], now - f.first < windowSeconds {
            failures[key] = (f.first, f.count + 1)
        } else {
            if failures.count >= maxKeys { evict(now: now) }
            failures[key] = (now, 1)
        }
    }

    public mutating func recordSuccess(_ key: String) { failures[key] = nil }

    public var trackedKeys: Int { failures.count }

    /// Drops expired entries, then the oldest half if still full.
    private mutating func evict(now: Int64) {
        failures = failures.filter { now - $0.value.first < windowSeconds }
        if failures.count >= maxKeys {
            let keep = failures.sorted { $0.value.first > $1.value.first }.prefix(maxKeys / 2)
            failures = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
