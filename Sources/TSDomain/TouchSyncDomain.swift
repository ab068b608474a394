import TSSync
import Logging
import TSCrypto
import TSStorage

/// Settings of the domain layer.
public struct DomainConfiguration: Sendable {
    /// HS256 secret for bearer tokens (config `auth.jwtSecret`).
    public var jwtSecret: [UInt8] { didSet { jwtKey = HMAC.SHA256Key(jwtSecret) } }
    /// `jwtSecret`'s HMAC key schedule, done once: every request's token is checked under it.
    public private(set) var jwtKey: HMAC.SHA256Key
    /// PBKDF2-HMAC-SHA256 iterations for new password hashes (config `auth.passwordIterations`).
    public var passwordIterations: Int
    /// Lifetime of tokens issued by register/login (config `auth.tokenLifetime`).
    public var tokenLifetime: Duration
    /// Failed logins per (username, client address), known and unknown usernames alike, before 429
    /// (config `auth.maxFailedLogins`; 0 turns it off).
    public var maxFailedLogins: Int
    /// The window of `maxFailedLogins` (config `auth.failedLoginWindow`).
    public var failedLoginWindow: Duration
    /// Failed logins per client address, a rate (config `auth.failedLoginsPerAddressPerMinute`, `…Burst`).
    public var failedLoginsPerAddress: WriteLimiter.Rule
    /// Entries the failed-login throttle tracks at most (config `auth.maxFailedLoginEntries`).
    public var maxFailedLoginEntries: Int
    /// Clock-skew leeway for a token's `exp`, `nbf` and `iat` (config `auth.tokenLeeway`).
    public var tokenLeeway: Duration
    /// Per-user write limits (config `limits.*`), checked by the route layer.
    public var writeLimits: WriteLimits.Configuration

    public init(jwtSecret: [UInt8], passwordIterations: Int = 210_000, tokenLifetime: Duration = .seconds(30 * 24 * 3600),
                maxFailedLogins: Int = 10, failedLoginWindow: Duration = .seconds(300), maxFailedLoginEntries: Int = 50_000,
                failedLoginsPerAddress: WriteLimiter.Rule = LoginThrottle.defaultAddressRule, tokenLeeway: Duration = .seconds(60), writeLimits: WriteLimits.Configuration = WriteLimits.Configuration()) {
        self.jwtSecret = jwtSecret
        self.jwtKey = HMAC.SHA256Key(jwtSecret)
        self.passwordIterations = passwordIterations
        self.tokenLifetime = tokenLifetime
        self.maxFailedLogins = maxFailedLogins
        self.failedLoginWindow = failedLoginWindow
        self.maxFailedLoginEntries = maxFailedLoginEntries
        self.failedLoginsPerAddress = failedLoginsPerAddress
        self.tokenLeeway = tokenLeeway
        self.writeLimits = writeLimits
    }
}

/// The TouchSync domain: every service over one database, publishing to one event seam.
/// REST routes and socket handlers both call these, so they behave the same.
public final class TouchSyncDomain: Sendable {
    public let db: Database
    public let clock: any WallClock
    /// The creation order (`seq`) of every new row (Migrations/0005).
    public let sequence: SequenceSource
    public let events: any DomainEventPublisher
    public let notifications: NotificationWorker
    public let auth: AuthService
    public let rooms: RoomService
    public let elements: ElementService
    public let reactions: ReactionService
    public let messages: MessageService
    public let posts: PostService
    public let devices: DeviceService
    /// Per-user write budgets, taken by the REST routes and Socket.IO handlers before a write.
    public let writeLimits: WriteLimits
    /// Account deletion and export (`DELETE /api/auth/me`, `GET /api/auth/me/export`).
    public let accounts: AccountService

    public init(db: Database, configuration: DomainConfiguration, events: any DomainEventPublisher,
                delivery: (any NotificationDelivery)? = nil, clock: any WallClock = SystemWallClock(), logger: Logger) {
        self.db = db
        self.clock = clock
        let sequence = SequenceSource(clock: clock)
        self.sequence = sequence
        self.events = events
        notifications = NotificationWorker(db: db, clock: clock, delivery: delivery ?? LogNotificationDelivery(logger: logger), logger: logger)
        auth = AuthService(db: db, clock: clock, sequence: sequence, configuration: configuration,
                           throttle: LockedValue(LoginThrottle(maxFailures: configuration.maxFailedLogins,
                                                               windowSeconds: configuration.failedLoginWindow.wholeSeconds,
                                                               maxKeys: configuration.maxFailedLoginEntries,
                                                               addressRule: configuration.failedLoginsPerAddress)))
        rooms = RoomService(db: db, clock: clock, sequence: sequence, events: events)
        let elementDependencies = ServiceDependencies(db: db, clock: clock, sequence: sequence, events: events, notifier: notifications)
        elements = ElementService(deps: elementDependencies)
        reactions = ReactionService(deps: elementDependencies)
        messages = MessageService(db: db, clock: clock, sequence: sequence, events: events)
        posts = PostService(db: db, clock: clock, sequence: sequence)
        devices = DeviceService(db: db, clock: clock, sequence: sequence, maxDevicesPerUser: configuration.writeLimits.maxDevicesPerUser)
        writeLimits = WriteLimits(configuration: configuration.writeLimits, clock: clock, logger: logger)
        accounts = AccountService(db: db, clock: clock, events: events, auth: auth)
    }
}
