import TSJSON

/// One configuration setting: its dotted path in the JSON config file, its environment
/// variable, its default and what it means. `Setting.all` is the single source of truth for
/// defaults, loading, validation and the documentation (README, `config/touchsync.example.json`);
/// it is built from the keys each layer declares (`SettingKeys.registry`).
public struct Setting: Sendable {
    public enum Kind: Sendable { case string, int, bool, stringList, optionalString, optionalStringList, duration }

    public let path: String
    public let kind: Kind
    public let defaultValue: JSONValue
    public let help: String
    /// A `.duration`'s older form as a bare number (`server.idleTimeoutSeconds: 60`), still read.
    public let integerForm: IntegerForm?

    /// The name a `.duration` setting had when it was a number of seconds or milliseconds, and
    /// that unit. A config file, variable or flag may still use it with a number (`60`); the same
    /// name may be the setting's own (`maxDisconnectionDuration`, milliseconds as in socket.io).
    public struct IntegerForm: Sendable {
        public let path: String
        public let unit: Duration
        public init(_ path: String, unit: Duration) { self.path = path; self.unit = unit }
        /// "seconds" or "milliseconds", for messages and the README.
        public var unitName: String { unit == .milliseconds(1) ? "milliseconds" : "seconds" }
        /// `TOUCHSYNC_` + the older name, as for a setting.
        public var environmentName: String { Setting.environmentName(of: path) }
    }

    init(path: String, kind: Kind, defaultValue: JSONValue, help: String, integerForm: IntegerForm? = nil) {
        self.path = path
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.integerForm = integerForm
    }

    /// `TOUCHSYNC_` + the path in SCREAMING_SNAKE_CASE: `realtime.globalEvents` → `TOUCHSYNC_REALTIME_GLOBAL_EVENTS`.
    /// A run of capitals is one word, as people write it: `realtime.allowEIO3` → `TOUCHSYNC_REALTIME_ALLOW_EIO3`.
    public var environmentName: String { Self.environmentName(of: path) }

    static func environmentName(of path: String) -> String {
        var out = "TOUCHSYNC_"
        var previous: Character = "."
        for ch in path {
            if ch == "." {
                out.append("_")
            } else if ch.isUppercase && !previous.isUppercase && previous != "." {
                out.append("_"); out.append(ch)
            } else {
                out.append(Character(ch.uppercased()))
            }
            previous = ch
        }
        return out
    }

    /// The name an underscore before every capital gives (`TOUCHSYNC_REALTIME_ALLOW_E_I_O3`): still
    /// accepted, since it is what earlier documentation printed.
    var spelledOutEnvironmentName: String {
        var out = "TOUCHSYNC_"
        for ch in path {
            if ch == "." { out.append("_") } else if ch.isUppercase { out.append("_"); out.append(ch) } else { out.append(Character(ch.uppercased())) }
        }
        return out
    }

    /// Short environment aliases for the settings people set most.
    public static let environmentAliases: [String: String] = [
        "TOUCHSYNC_HOST": "server.host", "TOUCHSYNC_PORT": "server.port", "TOUCHSYNC_DATABASE": "database.path",
        // TOUCHSYNC_DATABASE_URL is database.url's own environment name (TOUCHSYNC_ + DATABASE_URL).
        "TOUCHSYNC_JWT_SECRET": "auth.jwtSecret", "TOUCHSYNC_LOG_LEVEL": "log.level", "TOUCHSYNC_LOG_FORMAT": "log.format",
        "TOUCHSYNC_REDIS_URL": "realtime.redisUrl",  // cross-node fan-out
    ]

    /// Every setting, in the order of the README table and `config/touchsync.example.json`.
    public static let all: [Setting] = SettingKeys.registry.map(\.setting)

    public static func named(_ path: String) -> Setting? { all.first { $0.path == path } }

    /// The setting a name in a config file or a flag sets: its own name, or the older name of a
    /// `.duration` (then with the unit a bare number counts).
    static func resolve(_ path: String) -> (setting: Setting, integerUnit: Duration?)? {
        for s in all {
            if s.path == path { return (s, s.integerForm?.path == path ? s.integerForm?.unit : nil) }
            if let older = s.integerForm, older.path == path { return (s, older.unit) }
        }
        return nil
    }
}

/// The settings, one typed key each: `configuration[.serverMaxBodyBytes]` is an `Int`, and a
/// misspelt name does not compile. The default and the help text are the documentation. Each
/// layer declares the keys it reads in its own file, beside the `init(reader:)` that builds its
/// configuration from them (`HTTPServerConfiguration+Settings.swift` for `server.*`, ...).
extension SettingKeys {
    /// Every key, in documentation order (`Setting.all`): the layers' lists, each in the order of
    /// the README table. `SettingsRegistryTests` checks that no declared key is left out.
    static let registry: [SettingKeys] = Array([
        httpKeys, tlsKeys, databaseKeys, notificationKeys, backupKeys, authKeys, limitsKeys, realtimeKeys, redisKeys,
        inspectorKeys, metricsKeys, apnsKeys, processKeys,
    ].joined())
}
