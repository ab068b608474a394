import TSDomain

/// The domain's settings: tokens and the login throttle (`auth.*`), per-user write limits
/// (`limits.*`), notification pruning (`notifications.*`, `database.checkpointInterval`).
extension DomainConfiguration {
    init(reader: AppConfiguration, jwtSecret: [UInt8]) {
        self.init(jwtSecret: jwtSecret, passwordIterations: reader[.authPasswordIterations],
                  tokenLifetimeSeconds: reader[.authTokenLifetime].settingSeconds,
                  maxFailedLogins: reader[.authMaxFailedLogins],
                  failedLoginWindowSeconds: reader[.authFailedLoginWindow].settingSeconds,
                  maxFailedLoginEntries: reader[.authMaxFailedLoginEntries],
                  tokenLeewaySeconds: reader[.authTokenLeeway].settingSeconds, writeLimits: WriteLimits.Configuration(reader: reader))
    }
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

extension StorageMaintenance.Configuration {
    init(reader: AppConfiguration) {
        self.init(retention: NotificationRetention(retentionSeconds: reader[.notificationsRetention].settingSeconds,
                                                   maxPerFeed: max(0, reader[.notificationsMaxPerUser]),
                                                   batchSize: max(1, reader[.notificationsPruneBatchSize])),
                  pruneInterval: reader[.notificationsPruneInterval], checkpointInterval: reader[.databaseCheckpointInterval])
    }
}
