import TSDomain

/// Notification pruning (`notifications.*`) and the background WAL checkpoint
/// (`database.checkpointInterval`, declared with the storage settings).
extension SettingKeys {
    public static let notificationsRetention = SettingKey<Duration>("notifications.retention", "30d", help: "Delivered notifications older than this are deleted in the background (0s = keep forever); undelivered ones are kept.")
    public static let notificationsMaxPerUser = SettingKey<Int>("notifications.maxPerUser", 1000, help: "Newest notifications kept per user's feed (and per room's feed of new elements); older delivered ones are deleted (0 = no cap).")
    public static let notificationsPruneInterval = SettingKey<Duration>("notifications.pruneInterval", "5m", help: "Time between background pruning rounds of notifications (0s = off).")
    public static let notificationsPruneBatchSize = SettingKey<Int>("notifications.pruneBatchSize", 500, help: "Rows deleted per write while pruning, so the writer is never held long.")

    /// The `notifications.*` keys, in documentation order.
    static let notificationKeys: [SettingKeys] = [
        .notificationsRetention, .notificationsMaxPerUser, .notificationsPruneInterval, .notificationsPruneBatchSize,
    ]
}

extension StorageMaintenance.Configuration {
    init(reader: AppConfiguration) {
        self.init(retention: NotificationRetention(retention: reader[.notificationsRetention],
                                                   maxPerFeed: max(0, reader[.notificationsMaxPerUser]),
                                                   batchSize: max(1, reader[.notificationsPruneBatchSize])),
                  pruneInterval: reader[.notificationsPruneInterval], checkpointInterval: reader[.databaseCheckpointInterval])
    }
}
