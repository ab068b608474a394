import Logging
import TSSync

/// Per-user write limits (`limits.*`): one `WriteLimiter` bucket per user and kind of write, so
/// one client (a runaway script, a stolen token) cannot fill the database and everybody's sockets
/// with events, while other users keep their own full budget. REST answers a refusal with 429
/// `RATE_LIMITED` and `Retry-After`; Socket.IO acks `{"error": {"code": "RATE_LIMITED"}}`.
///
/// Checked by the route layer (REST and Socket.IO handlers) before the write, not inside the
/// services, so the seeders and fixture loaders are never limited. Per node: in a cluster each
/// node counts the writes it serves.
public final class WriteLimits: Sendable {
    public enum Kind: UInt8, CaseIterable, Sendable {
        /// Element create, update, delete, and clearing a room.
        case elementWrite
        case message
        case reactionToggle
        case roomCreate
        /// Adding a member, leaving a room, renaming it.
        case membershipChange

        /// The `limits.<name>PerSecond` / `limits.<name>Burst` settings.
        public var settingName: String {
            switch self {
            case .elementWrite: return "elementWrites"
            case .message: return "messages"
            case .reactionToggle: return "reactionToggles"
            case .roomCreate: return "roomCreates"
            case .membershipChange: return "membershipChanges"
            }
        }

        var noun: String {
            switch self {
            case .elementWrite: return "element writes"
            case .message: return "messages"
            case .reactionToggle: return "reaction toggles"
            case .roomCreate: return "room creations"
            case .membershipChange: return "membership changes"
            }
        }
    }

    public struct Configuration: Sendable {
        public var enabled: Bool
        public var rules: [Kind: WriteLimiter.Rule]
        public var maxTrackedKeys: Int

        public init(enabled: Bool = true, rules: [Kind: WriteLimiter.Rule] = Configuration.defaultRules, maxTrackedKeys: Int = 100_000) {
            self.enabled = enabled
            self.rules = rules
            self.maxTrackedKeys = maxTrackedKeys
        }

        /// The defaults of the settings (README, docs/limits.md say why each is what it is).
        public static let defaultRules: [Kind: WriteLimiter.Rule] = [
            .elementWrite: .init(perSecond: 60, burst: 300),
            .message: .init(perSecond: 10, burst: 30),
            .reactionToggle: .init(perSecond: 20, burst: 60),
            .roomCreate: .init(perSecond: 2, burst: 20),
            .membershipChange: .init(perSecond: 10, burst: 30),
        ]

        /// No limit at all (domain tests, tools).
        public static let off = Configuration(enabled: false)
    }

    public let configuration: Configuration
    private let limiter: LockedValue<WriteLimiter>
    private let clock: any WallClock
    private let logger: Logger

    public init(configuration: Configuration, clock: any WallClock, logger: Logger) {
        self.configuration = configuration
        limiter = LockedValue(WriteLimiter(maxKeys: configuration.maxTrackedKeys))
        self.clock = clock
        self.logger = logger
    }

    /// Takes one `kind` write from `user`'s budget, or throws `WriteRateLimited`.
    public func take(_ kind: Kind, user: String) throws(WriteRateLimited) {
        guard configuration.enabled, let rule = configuration.rules[kind], rule.perSecond > 0 else { return }
        let now = clock.nowMicroseconds()
        let outcome = limiter.withLock { $0.take(kind: kind.rawValue, user: user, rule: rule, now: now) }
        guard case .refused(let wait, let first) = outcome else { return }
        let seconds = max(1, (wait + 999_999) / 1_000_000)
        if first {
            // One line per run of refusals, not one per refused write.
            logger.notice("user \(user) is over the \(kind.noun) limit (\(rule.perSecond)/s, burst \(rule.burst); limits.\(kind.settingName)PerSecond): refusing with RATE_LIMITED until a write is allowed again")
        }
        throw WriteRateLimited(kind: kind, rule: rule, retryAfterSeconds: seconds)
    }

    /// Buckets currently tracked (bounded by `limits.maxTrackedUsers`).
    public var trackedKeys: Int { limiter.current.trackedKeys }
}

/// A write refused by `WriteLimits`: 429 `RATE_LIMITED` with `Retry-After` over REST, the same
/// code in a Socket.IO ack.
public struct WriteRateLimited: Error, Sendable {
    public let kind: WriteLimits.Kind
    public let rule: WriteLimiter.Rule
    public let retryAfterSeconds: Int64

    public var message: String {
        "Too many \(kind.noun): at most \(rule.perSecond) per second (bursts of \(rule.burst)); retry in \(retryAfterSeconds) s"
    }
}
