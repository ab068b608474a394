/// Failed-login throttling: 429 `RATE_LIMITED` with `Retry-After` (docs/api.md, "Conventions").
///
/// Counted per key: after `maxFailures` failures of one key within `windowSeconds`, that key is
/// refused until the window has passed since its first failure. A success clears the key.
/// `AuthService.login` uses two kinds of key, so nobody can lock someone else out:
/// - `pair(username:address:)` — wrong passwords for an existing user from one client address.
///   Bob's failures from address A never refuse bob from address B, nor alice from address A.
/// - `unknownUser(address:)` — attempts at usernames that do not exist, per client address, checked
///   on every login from that address (checking it only for unknown names would tell a prober which
///   names exist).
///
/// Bounded: at most `maxKeys` keys are tracked; when full, expired keys are dropped and then the
/// oldest half (amortised O(log n) per insertion). Pure state; callers lock.
public struct LoginThrottle: Sendable {
    public let maxFailures: Int
    public let windowSeconds: Int64
    public let maxKeys: Int
    private var failures: [String: (first: Int64, count: Int)] = [:]

    public init(maxFailures: Int = 10, windowSeconds: Int64 = 300, maxKeys: Int = 50_000) {
        self.maxFailures = maxFailures
        self.windowSeconds = windowSeconds
        self.maxKeys = max(2, maxKeys)
    }

    /// The key of failures for an existing `username` from `address`.
    public static func pair(username: String, address: String) -> String { "pair:" + address + "\u{0}" + username }

    /// The key of failures for usernames that do not exist, from `address`.
    public static func unknownUser(address: String) -> String { "unknown:" + address }

    /// Seconds until `key` may try again, or nil when it may try now.
    public func retryAfter(_ key: String, now: Int64) -> Int64? {
        guard maxFailures > 0, let f = failures[key], f.count >= maxFailures else { return nil }
        let wait = f.first + windowSeconds - now
        return wait > 0 ? wait : nil
    }

    public mutating func recordFailure(_ key: String, now: Int64) {
        guard maxFailures > 0 else { return }
        if let f = failures[key], now - f.first < windowSeconds {
            failures[key] = (f.first, f.count + 1)
        } else {
            if failures[key] == nil && failures.count >= maxKeys { evict(now: now) }
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
