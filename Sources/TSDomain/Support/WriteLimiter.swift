/// Token buckets per (kind of write, user): each user may make `perSecond` writes of a kind per
/// second on average and `burst` in a row (a bucket holds up to `burst` tokens, refills at
/// `perSecond`, and a write takes one). One user's bucket never touches another's.
///
/// Bounded like `LoginThrottle`: at most `maxKeys` buckets are tracked. A bucket that has refilled
/// completely carries no information (a fresh one is the same), so when the table is full those
/// go first, then the half closest to full. Time is in microseconds of the injected wall clock; a
/// clock that steps back refills nothing. Pure state; callers lock (`WriteLimits`).
public struct WriteLimiter: Sendable {
    /// `perSecond` 0 turns the kind's limit off.
    public struct Rule: Sendable, Equatable {
        public var perSecond: Int
        public var burst: Int
        public init(perSecond: Int, burst: Int) {
            self.perSecond = max(0, perSecond)
            self.burst = max(1, burst)
        }
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

    /// Tokens are counted in millionths, so a bucket refills by exactly `perSecond` per
    /// microsecond and every comparison is exact integer arithmetic.
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
        guard rule.perSecond > 0 else { return .allowed }
        let key = Key(kind: kind, user: user)
        let rate = Int64(rule.perSecond)  // micro-tokens per microsecond
        let capacity = Int64(rule.burst) * Self.oneToken
        var bucket: Bucket
        if let b = buckets[key] {
            bucket = b
            // Capped before multiplying: a long idle time only ever fills the bucket.
            let elapsed = min(max(0, now - bucket.updated), capacity / rate + 1)
            bucket.microTokens = min(capacity, bucket.microTokens + elapsed * rate)
        } else {
            if buckets.count >= maxKeys { evict(now: now) }
            bucket = Bucket(microTokens: capacity, updated: now, fullAt: now, refusing: false)
        }
        bucket.updated = max(bucket.updated, now)
        let outcome: Outcome
        if bucket.microTokens >= Self.oneToken {
            bucket.microTokens -= Self.oneToken
            bucket.refusing = false
            outcome = .allowed
        } else {
            let wait = (Self.oneToken - bucket.microTokens + rate - 1) / rate
            outcome = .refused(retryAfterMicroseconds: max(1, wait), firstInRow: !bucket.refusing)
            bucket.refusing = true
        }
        bucket.fullAt = bucket.updated + (capacity - bucket.microTokens + rate - 1) / rate
        buckets[key] = bucket
        return outcome
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
