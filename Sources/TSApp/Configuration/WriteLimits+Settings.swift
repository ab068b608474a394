import TSDomain

/// The per-user write limits (`limits.*`, docs/limits.md).
extension SettingKeys {
    // limits: per-user write limits (docs/limits.md).
    public static let limitsEnabled = SettingKey<Bool>("limits.enabled", true, help: "Per-user write limits (limits.*PerSecond / limits.*Burst): past them a write gets 429 RATE_LIMITED with Retry-After (Socket.IO: an ack error RATE_LIMITED). false turns every one off (benchmarks).")
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
    public static let limitsMaxTrackedUsers = SettingKey<Int>("limits.maxTrackedUsers", 100_000, help: "(user, kind of write) budgets tracked at most; when full, the ones refilled completely are dropped first (they hold no information), then the half closest to full.")

    /// The `limits.*` keys, in documentation order.
    static let limitsKeys: [SettingKeys] = [
        .limitsEnabled, .limitsElementWritesPerSecond, .limitsElementWritesBurst, .limitsMessagesPerSecond, .limitsMessagesBurst,
        .limitsReactionTogglesPerSecond, .limitsReactionTogglesBurst, .limitsRoomCreatesPerSecond, .limitsRoomCreatesBurst,
        .limitsMembershipChangesPerSecond, .limitsMembershipChangesBurst, .limitsMaxTrackedUsers,
    ]
}

extension WriteLimits.Configuration {
    init(reader: AppConfiguration) {
        var rules: [WriteLimits.Kind: WriteLimiter.Rule] = [:]
        for kind in WriteLimits.Kind.allCases {
            let (perSecond, burst) = Self.keys(kind)
            rules[kind] = WriteLimiter.Rule(perSecond: reader[perSecond], burst: reader[burst])
        }
        self.init(enabled: reader[.limitsEnabled], rules: rules, maxTrackedKeys: max(2, reader[.limitsMaxTrackedUsers]))
    }

    /// The `limits.<kind>PerSecond` and `limits.<kind>Burst` keys of a kind of write
    /// (`WriteLimits.Kind.settingName` names them in log lines).
    static func keys(_ kind: WriteLimits.Kind) -> (perSecond: SettingKey<Int>, burst: SettingKey<Int>) {
        switch kind {
        case .elementWrite: return (.limitsElementWritesPerSecond, .limitsElementWritesBurst)
        case .message: return (.limitsMessagesPerSecond, .limitsMessagesBurst)
        case .reactionToggle: return (.limitsReactionTogglesPerSecond, .limitsReactionTogglesBurst)
        case .roomCreate: return (.limitsRoomCreatesPerSecond, .limitsRoomCreatesBurst)
        case .membershipChange: return (.limitsMembershipChangesPerSecond, .limitsMembershipChangesBurst)
        }
    }
}
