import Logging
import TSSync

/// Write limits (`limits.*`): one `WriteLimiter` bucket per user and kind of write, so one
/// client (a runaway script, a stolen token) cannot fill the database and everybody's sockets
/// with events, while other users keep their own full budget. Sign-ups are counted per client
/// address instead (a new account would otherwise arrive with fresh budgets). REST answers a
/// refusal with 429 `RATE_LIMITED` and `Retry-After`; Socket.IO acks `{"error": {"code": "RATE_LIMITED"}}`.
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
        case postCreate
        /// Like, unlike, save, unsave.
        case postInteraction
        /// Seen and read markers: `POST …/seen`, `POST …/messages/read`, and the Socket.IO
        /// `room:join`, which marks the room's elements seen in a write.
        case readMarker
        /// Push-token registrations (`POST /api/devices`).
        case deviceRegistration
        /// Accounts created, keyed by client address, counted per hour.
        case signUp

        /// The `limits.<name>PerSecond` (`PerHour` for sign-ups) / `limits.<name>Burst` settings.
        public var settingName: String {
            switch self {
            case .elementWrite: return "elementWrites"
            case .message: return "messages"
            case .reactionToggle: return "reactionToggles"
            case .roomCreate: return "roomCreates"
            case .membershipChange: return "membershipChanges"
            case .postCreate: return "posts"
            case .postInteraction: return "postInteractions"
            case .readMarker: return "readMarkers"
            case .deviceRegistration: return "deviceRegistrations"
            case .signUp: return "signUps"
            }
        }

        /// Seconds over which `limits.<name>Per…` counts: an hour for sign-ups (an honest
        /// address signs up a few accounts an hour; one a second would be 86,400 a day).
        public var periodSeconds: Int { self == .signUp ? 3600 : 1 }

        /// The rate setting's full name, as log lines and messages cite it.
        public var rateSetting: String { "limits.\(settingName)Per\(periodSeconds == 1 ? "Second" : "Hour")" }

        var noun: String {
            switch self {
            case .elementWrite: return "element writes"
            case .message: return "messages"
            case .reactionToggle: return "reaction toggles"
            case .roomCreate: return "room creations"
            case .membershipChange: return "membership changes"
            case .postCreate: return "posts"
            case .postInteraction: return "likes and saves"
            case .readMarker: return "seen and read markers"
            case .deviceRegistration: return "device registrations"
            case .signUp: return "sign-ups"
            }
        }
    }

    public struct Configuration: Sendable {
        public var enabled: Bool
        public var rules: [Kind: WriteLimiter.Rule]
        public var maxTrackedKeys: Int
        /// Push tokens kept per user (`limits.maxDevicesPerUser`): registering one more drops the
        /// least recently registered. 0 = no cap.
        public var maxDevicesPerUser: Int

        public init(enabled: Bool = true, rules: [Kind: WriteLimiter.Rule] = Configuration.defaultRules, maxTrackedKeys: Int = 100_000,
                    maxDevicesPerUser: Int = 20) {
            self.enabled = enabled
            self.rules = rules
            self.maxTrackedKeys = maxTrackedKeys
            self.maxDevicesPerUser = maxDevicesPerUser
        }

        /// The defaults of the settings (README, docs/limits.md say why each is what it is).
        public static let defaultRules: [Kind: WriteLimiter.Rule] = [
            .elementWrite: .init(perSecond: 60, burst: 300),
            .message: .init(perSecond: 10, burst: 30),
            .reactionToggle: .init(perSecond: 20, burst: 60),
            .roomCreate: .init(perSecond: 2, burst: 20),
            .membershipChange: .init(perSecond: 10, burst: 30),
            .postCreate: .init(perSecond: 1, burst: 10),
            .postInteraction: .init(perSecond: 10, burst: 60),
            .readMarker: .init(perSecond: 20, burst: 100),
            .deviceRegistration: .init(perSecond: 1, burst: 10),
            .signUp: .init(count: 100, periodSeconds: 3600, burst: 50),
        ]

        /// No limit at all (domain tests, tools).
        public static let off = Configuration(enabled: false)
    }

    public let configuration: Configuration
    private let limiter: LockedValue<WriteLimiter>
    private let clock: any WallClock
    private let logger: Logger
    /// Whether the rules apply now: `configuration.enabled` at start; test mode starts with them
    /// off and a test turns them on (`POST /api/test/limits`).
    private let active: Atomic<Bool>

    public init(configuration: Configuration, clock: any WallClock, logger: Logger) {
        self.configuration = configuration
        limiter = LockedValue(WriteLimiter(maxKeys: configuration.maxTrackedKeys))
        self.clock = clock
        self.logger = logger
        active = Atomic(configuration.enabled)
    }

    /// Whether writes are limited now.
    public var isActive: Bool { active.load(ordering: .relaxed) }

    /// Turns every limit on or off (test mode). Turning them on starts every budget full.
    public func setActive(_ on: Bool) {
        limiter.withLock { $0.removeAll() }
        active.store(on, ordering: .relaxed)
    }

    /// Takes one `kind` write from `user`'s budget (for `.signUp`, `user` is the client address),
    /// or throws `WriteRateLimited`.
    public func take(_ kind: Kind, user: String) throws(WriteRateLimited) {
        guard isActive, let rule = configuration.rules[kind], rule.count > 0 else { return }
        let now = clock.nowMicroseconds()
        let outcome = limiter.withLock { $0.take(kind: kind.rawValue, user: user, rule: rule, now: now) }
        guard case .refused(let wait, let first) = outcome else { return }
        let seconds = max(1, (wait + 999_999) / 1_000_000)
        if first {
            // One line per run of refusals, not one per refused write.
            logger.notice("\(kind == .signUp ? "address" : "user") \(user) is over the \(kind.noun) limit (\(WriteRateLimited.rate(rule)), burst \(rule.burst); \(kind.rateSetting)): refusing with RATE_LIMITED until a write is allowed again")
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
        "Too many \(kind.noun)\(kind == .signUp ? " from this address" : ""): at most \(Self.rate(rule)) (bursts of \(rule.burst)); retry in \(retryAfterSeconds) s"
    }

    static func rate(_ rule: WriteLimiter.Rule) -> String {
        rule.periodSeconds == 3600 ? "\(rule.count) per hour" : rule.periodSeconds == 1 ? "\(rule.count) per second" : "\(rule.count) per \(rule.periodSeconds) s"
    }
}
