/// The process's own settings: logging (read by the `touchsync` command), demo data and test mode
/// (read by `TouchSyncServer`).
extension SettingKeys {
    public static let logLevel = SettingKey<String>("log.level", "info", help: "trace, debug, info, notice, warning, error or critical.")
    public static let logFormat = SettingKey<String>("log.format", "text", help: "text (one line per event) or json.")
    public static let demo = SettingKey<Bool>("demo", false, help: "Seed demo users, rooms, elements, messages and posts on start (if the database is empty).")
    public static let testMode = SettingKey<Bool>("testMode", false,
            help: "Test-target mode: /api/test/reset, /api/test/fixtures, /api/test/events and /api/test/faults (docs/test-mode.md), for this machine only unless testModeToken is set. Refused with TOUCHSYNC_ENV=production.")
    public static let testModeToken = SettingKey<String?>("testModeToken", nil,
            help: "A secret that opens the test-mode routes to any address (a server in a container, a CI service container): requests send it as X-TouchSync-Test: <token>. Unset: only this machine (loopback, not forwarded by a proxy).")

    /// The process's own keys (`log.*`, `demo`, `testMode`), in documentation order.
    static let processKeys: [SettingKeys] = [
        .logLevel, .logFormat, .demo, .testMode, .testModeToken,
    ]
}
