/// Backups while serving (`backup.*`, docs/backup.md).
extension SettingKeys {
    // Backups while serving (docs/backup.md): SQLite only; PostgreSQL uses pg_dump.
    public static let backupDirectory = SettingKey<String?>("backup.directory", nil, help: "Directory for scheduled backups of the SQLite database (touchsync-YYYYMMDDTHHMMSS.mmmZ.sqlite, each checked with integrity_check); null turns them off.")
    public static let backupInterval = SettingKey<Duration>("backup.interval", "6h", help: "Time between scheduled backups; the first is due an interval after the newest backup already in backup.directory (at start when there is none).")
    public static let backupKeep = SettingKey<Int>("backup.keep", 7, help: "Newest scheduled backups kept in backup.directory; older ones are deleted after each backup (0 = keep all).")

    /// The `backup.*` keys, in documentation order.
    static let backupKeys: [SettingKeys] = [
        .backupDirectory, .backupInterval, .backupKeep,
    ]
}

extension ScheduledBackups.Configuration {
    /// nil when `backup.directory` is unset (no backups). `ScheduledBackups.make` checks the values.
    init?(reader: AppConfiguration) {
        guard let directory = reader[.backupDirectory], !directory.isEmpty else { return nil }
        self.init(directory: directory, interval: reader[.backupInterval], keep: reader[.backupKeep])
    }
}
