import TSDomain

/// The per-user write limits (`limits.*`, docs/limits.md).
extension SettingKeys {
    // limits: per-user write limits (docs/limits.md).
    public static let limitsEnabled = SettingKey<Bool>("limits.enabled", true, help: "Write limits (limits.*PerSecond, limits.signUpsPerHour, limits.*Burst): past them a write gets 429 RATE_LIMITED with Retry-After (Socket.IO: an ack error RATE_LIMITED). false turns every one off (benchmarks). In test mode they start off whatever this says; a test turns them on with POST /api/test/limits.")
    public static let limitsElementWritesPerSecond = SettingKey<Int>("limits.elementWritesPerSecond", 60, help: "Element creates, updates and deletes (and room clears) per user per second, on average (0 = no limit). Dragging an element sends an update per frame.")
    public static let limitsElementWritesBurst = SettingKey<Int>("limits.elementWritesBurst", 300, help: "Element writes one user may make in a row before limits.elementWritesPerSecond applies.")
    public static let limitsMessagesPerSecond = SettingKey<Int>("limits.messagesPerSecond", 10, help: "Chat messages per user per second, on average (0 = no limit).")
    public static let limitsMessagesBurst = SettingKey<Int>("limits.messagesBurst", 30, help: "Messages one user may send in a row.")
    public static let limitsReactionTogglesPerSecond = SettingKey<Int>("limits.reactionTogglesPerSecond", 20, help: "Reaction toggles per user per second, on average (0 = no limit).")
    public static let limitsReactionTogglesBurst = SettingKey<Int>("limits.reactionTogglesBurst", 60, help: "Reaction toggles one user may make in a row.")
    public static let limitsRoomCreatesPerSecond = SettingKey<Int>("limits.roomCreatesPerSecond", 2, help: "Rooms one user may create per second, on average (0 = no limit).")
    public static let limitsRoomCreatesBurst = SettingKey<Int>("limits.roomCreatesBurst", 20, help: "Rooms one user may create in a row.")
    public static let limitsMembershipChangesPerSecond = SettingKey<Int>("limits.membershipChangesPerSecond", 10, help: "Membership changes (add a member, leave, rename a room) per user per second, on average (0 = no limit).")
    public static let limitsMembershipChangesBurst = SettingKey<Int>("limits.membershipChangesBurst", 30, help: "Membership changes one user may make in a row.")
    public static let limitsPostsPerSecond = SettingKey<Int>("limits.postsPerSecond", 1, help: "Posts (POST /api/mobile/posts) per user per second, on average (0 = no limit).")
    public static let limitsPostsBurst = SettingKey<Int>("limits.postsBurst", 10, help: "Posts one user may create in a row.")
    public static let limitsPostInteractionsPerSecond = SettingKey<Int>("limits.postInteractionsPerSecond", 10, help: "Likes, unlikes, saves and unsaves of posts per user per second, on average (0 = no limit).")
    public static let limitsPostInteractionsBurst = SettingKey<Int>("limits.postInteractionsBurst", 60, help: "Likes and saves one user may make in a row.")
    public static let limitsReadMarkersPerSecond = SettingKey<Int>("limits.readMarkersPerSecond", 20, help: "Seen and read markers (POST .../seen, POST .../messages/read, Socket.IO room:join) per user per second, on average (0 = no limit).")
    public static let limitsReadMarkersBurst = SettingKey<Int>("limits.readMarkersBurst", 100, help: "Seen and read markers one user may set in a row (an app opening after a while joins and marks many rooms).")
    public static let limitsDeviceRegistrationsPerSecond = SettingKey<Int>("limits.deviceRegistrationsPerSecond", 1, help: "Push-token registrations (POST /api/devices) per user per second, on average (0 = no limit).")
    public static let limitsDeviceRegistrationsBurst = SettingKey<Int>("limits.deviceRegistrationsBurst", 10, help: "Push-token registrations one user may make in a row.")
    public static let limitsMaxDevicesPerUser = SettingKey<Int>("limits.maxDevicesPerUser", 20, help: "Push tokens kept per user; registering one more drops that user's least recently registered (0 = no cap).")
    public static let limitsSignUpsPerHour = SettingKey<Int>("limits.signUpsPerHour", 100, help: "Accounts created (POST /api/auth/register) per client address per hour, on average (0 = no limit). Per address, not per user: a new account must not bring fresh budgets. Behind a proxy, set server.trustedProxies so each client is counted, not the proxy.")
    public static let limitsSignUpsBurst = SettingKey<Int>("limits.signUpsBurst", 50, help: "Accounts one client address may create in a row (an office behind one NAT address onboarding together).")
    public static let limitsMaxTrackedUsers = SettingKey<Int>("limits.maxTrackedUsers", 100_000, help: "(user, kind of write) budgets tracked at most; when full, the ones refilled completely are dropped first (they hold no information), then the half closest to full.")

    /// The `limits.*` keys, in documentation order.
    static let limitsKeys: [SettingKeys] = [
        .limitsEnabled, .limitsElementWritesPerSecond, .limitsElementWritesBurst, .limitsMessagesPerSecond, .limitsMessagesBurst,
        .limitsReactionTogglesPerSecond, .limitsReactionTogglesBurst, .limitsRoomCreatesPerSecond, .limitsRoomCreatesBurst,
        .limitsMembershipChangesPerSecond, .limitsMembershipChangesBurst, .limitsPostsPerSecond, .limitsPostsBurst,
        .limitsPostInteractionsPerSecond, .limitsPostInteractionsBurst, .limitsReadMarkersPerSecond, .limitsReadMarkersBurst,
        .limitsDeviceRegistrationsPerSecond, .limitsDeviceRegistrationsBurst, .limitsMaxDevicesPerUser, .limitsSignUpsPerHour, .limitsSignUpsBurst,
        .limitsMaxTrackedUsers,
    ]
}

extension WriteLimits.Configuration {
    init(reader: AppConfiguration) {
        var rules: [WriteLimits.Kind: WriteLimiter.Rule] = [:]
        for kind in WriteLimits.Kind.allCases {
            let (rate, burst) = Self.keys(kind)
            rules[kind] = WriteLimiter.Rule(count: reader[rate], periodSeconds: kind.periodSeconds, burst: reader[burst])
        }
        self.init(enabled: reader[.limitsEnabled], rules: rules, maxTrackedKeys: max(2, reader[.limitsMaxTrackedUsers]),
                  maxDevicesPerUser: max(0, reader[.limitsMaxDevicesPerUser]))
    }

    /// The `limits.<kind>PerSecond` (`PerHour`) and `limits.<kind>Burst` keys of a kind of write
    /// (`WriteLimits.Kind.rateSetting` names them in log lines).
    static func keys(_ kind: WriteLimits.Kind) -> (rate: SettingKey<Int>, burst: SettingKey<Int>) {
        switch kind {
        case .elementWrite: return (.limitsElementWritesPerSecond, .limitsElementWritesBurst)
        case .message: return (.limitsMessagesPerSecond, .limitsMessagesBurst)
        case .reactionToggle: return (.limitsReactionTogglesPerSecond, .limitsReactionTogglesBurst)
        case .roomCreate: return (.limitsRoomCreatesPerSecond, .limitsRoomCreatesBurst)
        case .membershipChange: return (.limitsMembershipChangesPerSecond, .limitsMembershipChangesBurst)
        case .postCreate: return (.limitsPostsPerSecond, .limitsPostsBurst)
        case .postInteraction: return (.limitsPostInteractionsPerSecond, .limitsPostInteractionsBurst)
        case .readMarker: return (.limitsReadMarkersPerSecond, .limitsReadMarkersBurst)
        case .deviceRegistration: return (.limitsDeviceRegistrationsPerSecond, .limitsDeviceRegistrationsBurst)
        case .signUp: return (.limitsSignUpsPerHour, .limitsSignUpsBurst)
        }
    }
}
