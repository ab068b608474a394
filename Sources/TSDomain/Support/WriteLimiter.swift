/// Token buckets per (kind of write, user): each user may make `count` writes of a kind per
/// `periodSeconds` on average and `burst` in a row (a bucket holds up to `burst` tokens, refills at
/// `count / periodSeconds` a second, and a write takes one). One user's bucket never touches another's.
///
/// Bounded like `LoginThrottle`: at most `maxKeys` buckets are tracked. A bucket that has refilled
/// completely carries no information (a fresh one is the same), so when the table is full those
/// go first, then the half closest to full. Time is in microseconds of the injected wall clock; a
/// clock that steps back refills nothing. Pure state; callers lock (`WriteLimits`).
public struct WriteLimiter: Sendable {
    /// `count` 0 turns the kind's limit off.
    public struct Rule: Sendable, Equatable {
        /// Writes per `periodSeconds`, on average.
        public var count: Int
        /// 1 for the per-second limits; 3600 for the sign-ups per address, which are counted per hour.
        public var periodSeconds: Int
        public var burst: Int
        public init(count: Int, periodSeconds: Int, burst: Int) {
            self.count = max(0, count)
            self.periodSeconds = max(1, periodSeconds)
            self.burst = max(1, burst)
        }
        public init(perSecond: Int, burst: Int) { self.init(count: perSecond, periodSeconds: 1, burst: burst) }
    }

    public enum Outcome: Equatable, Sendable {
        case allowed
        /// Refused; `retryAfterMicroseconds` until one token is back. `firstInRow`: the write before
        /// this one was allowed (the moment worth one log line).
        case refused(retryAfterMicroseconds: Int64, firstInRow: Bool)
    }

    struct Key: Hashable, Sendable {
        let kind: UInt8
        let user: String
    }

    /// Tokens are counted in millionths, so a bucket refills by exactly `count / periodSeconds`
    /// micro-tokens per microsecond and every comparison is integer arithmetic.
    struct Bucket: Sendable {
        var microTokens: Int64
        var updated: Int64
        /// When the bucket is full again (for eviction).
        var fullAt: Int64
        var refusing: Bool
    }

    static let oneToken: Int64 = 1_000_000

    public let maxKeys: Int
    private var buckets: [Key: Bucket] = [:]

    public init(maxKeys: Int = 100_000) { self.maxKeys = max(2, maxKeys) }

    public var trackedKeys: Int { buckets.count }

    public mutating func take(kind: UInt8, user: String, rule: Rule, now: Int64) -> Outcome {
        guard rule.count > 0 else { return .allowed }
        let key = Key(kind: kind, user: user)
        var bucket: Bucket
        if let b = buckets[key] {
            bucket = Self.refilled(b, rule: rule, now: now)
        } else {
            if buckets.count >= maxKeys { evict(now: now) }
            bucket = Bucket(microTokens: Self.capacity(rule), updated: now, fullAt: now, refusing: false)
        }
        let outcome: Outcome
        if bucket.microTokens >= Self.oneToken {
            bucket.microTokens -= Self.oneToken
            bucket.refusing = false
            outcome = .allowed
        } else {
            outcome = .refused(retryAfterMicroseconds: Self.microseconds(until: Self.oneToken - bucket.microTokens, rule: rule),
                               firstInRow: !bucket.refusing)
            bucket.refusing = true
        }
        bucket.fullAt = bucket.updated + Self.microseconds(until: Self.capacity(rule) - bucket.microTokens, rule: rule)
        buckets[key] = bucket
        return outcome
    }

    /// Microseconds until `user` has a `kind` token, or nil when it has one now; takes nothing.
    public func wait(kind: UInt8, user: String, rule: Rule, now: Int64) -> Int64? {
        guard rule.count > 0, let b = buckets[Key(kind: kind, user: user)] else { return nil }
        let bucket = Self.refilled(b, rule: rule, now: now)
        return bucket.microTokens >= Self.oneToken ? nil : Self.microseconds(until: Self.oneToken - bucket.microTokens, rule: rule)
    }

    /// Forgets every bucket (a test-mode reset).
    public mutating func removeAll() { buckets = [:] }

    static func capacity(_ rule: Rule) -> Int64 { Int64(rule.burst) * oneToken }

    /// Time for `microTokens` to refill at `rule`'s rate, rounded up (at least 1 µs).
    static func microseconds(until microTokens: Int64, rule: Rule) -> Int64 {
        guard microTokens > 0 else { return 0 }
        let count = Int64(rule.count), period = Int64(rule.periodSeconds)
        return max(1, (microTokens * period + count - 1) / count)
    }

    /// `b` refilled up to `now`. The elapsed time is capped before multiplying: a long idle time
    /// only ever fills the bucket (and the products stay far below Int64's range).
    static func refilled(_ b: Bucket, rule: Rule, now: Int64) -> Bucket {
        var bucket = b
        let capacity = Self.capacity(rule)
        let elapsed = min(max(0, now - bucket.updated), microseconds(until: capacity, rule: rule) + 1)
        bucket.microTokens = min(capacity, bucket.microTokens + elapsed * Int64(rule.count) / Int64(rule.periodSeconds))
        bucket.updated = max(bucket.updated, now)
        return bucket
    }

    /// Drops the buckets that are full again, then, if still full, the half closest to full.
    private mutating func evict(now: Int64) {
        buckets = buckets.filter { $0.value.fullAt > now }
        if buckets.count >= maxKeys {
            let keep = buckets.sorted { $0.value.fullAt > $1.value.fullAt }.prefix(maxKeys / 2)
            buckets = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
