/// Failed-login throttling: 429 `RATE_LIMITED` with `Retry-After` (docs/api.md, "Conventions").
///
/// Two measures, neither of which lets one caller lock other users out:
/// - **Per (username, client address)** (`pair`): after `maxFailures` failures of one pair within
///   `windowSeconds`, that pair is refused until the window has passed since its first failure; a
///   success clears it. Counted the same way for usernames that exist and ones that do not, so the
///   answers (401, then 429 after the same count) and the work done (one password hash each) never
///   tell a prober which names exist. Bob's failures from address A never refuse bob from address
///   B, nor alice from address A.
/// - **Per client address, a rate** (`addressRule`): failures from one address, whatever the
///   names, refill a token bucket (`auth.failedLoginsPerAddressPerMinute`, burst
///   `auth.failedLoginsPerAddressBurst`). Past it a login from that address waits seconds (the
///   time to the next token), not a window: guessing across many names is slowed to the rate,
///   while the users behind an office NAT are refused only while failures arrive faster than the
///   rate, and only until the next token.
///
/// Bounded: at most `maxKeys` pairs and `maxKeys` addresses are tracked; when full, expired
/// entries are dropped and then the oldest half. Pure state; callers lock.
public struct LoginThrottle: Sendable {
    public let maxFailures: Int
    public let windowSeconds: Int64
    public let maxKeys: Int
    /// Failed logins per client address (count per minute, burst); count 0 turns it off.
    public let addressRule: WriteLimiter.Rule
    private var failures: [String: (first: Int64, count: Int)] = [:]
    private var addresses: WriteLimiter

    public init(maxFailures: Int = 10, windowSeconds: Int64 = 300, maxKeys: Int = 50_000,
                addressRule: WriteLimiter.Rule = LoginThrottle.defaultAddressRule) {
        self.maxFailures = maxFailures
        self.windowSeconds = windowSeconds
        self.maxKeys = max(2, maxKeys)
        self.addressRule = addressRule
        addresses = WriteLimiter(maxKeys: maxKeys)
    }

    /// 30 failures a minute, 60 in a row: an office's typos never reach it; a script guessing
    /// across names is held to one guess every 2 s per address.
    public static let defaultAddressRule = WriteLimiter.Rule(count: 30, periodSeconds: 60, burst: 60)

    /// The key of failures for `username` from `address` (whether the name exists or not).
    public static func pair(username: String, address: String) -> String { "pair:" + address + "\u{0}" + username }

    /// Seconds until `address` may try a login again, or nil when it may try now (takes nothing).
    public func addressRetryAfter(_ address: String, nowMicroseconds: Int64) -> Int64? {
        addresses.wait(kind: 0, user: address, rule: addressRule, now: nowMicroseconds).map { max(1, ($0 + 999_999) / 1_000_000) }
    }

    /// Counts one failed login from `address` against its rate.
    public mutating func recordAddressFailure(_ address: String, nowMicroseconds: Int64) {
        _ = addresses.take(kind: 0, user: address, rule: addressRule, now: nowMicroseconds)
    }

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
