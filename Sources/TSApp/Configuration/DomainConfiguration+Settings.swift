import TSDomain

/// The domain's settings: tokens and the login throttle (`auth.*`); the per-user write limits
/// (`limits.*`) are in WriteLimits+Settings.swift.
extension SettingKeys {
    public static let authJwtSecret = SettingKey<String?>("auth.jwtSecret", nil, help: "HS256 secret. When null a random one is generated and stored beside the database (refused with TOUCHSYNC_ENV=production).")
    public static let authPasswordIterations = SettingKey<Int>("auth.passwordIterations", 210_000, help: "PBKDF2-HMAC-SHA256 iterations for password hashes.")
    public static let authTokenLifetime = SettingKey<Duration>("auth.tokenLifetime", "30d", integerForm: .init("auth.tokenLifetimeSeconds", unit: .seconds(1)), help: "Lifetime of tokens from register/login (30 days).")
    public static let authMaxFailedLogins = SettingKey<Int>("auth.maxFailedLogins", 10, help: "Failed logins per (username, client address) within the window before that pair gets 429 RATE_LIMITED; counted alike for usernames that exist and ones that do not (0 turns it off).")
    public static let authFailedLoginWindow = SettingKey<Duration>("auth.failedLoginWindow", "5m", integerForm: .init("auth.failedLoginWindowSeconds", unit: .seconds(1)), help: "The window of auth.maxFailedLogins.")
    public static let authFailedLoginsPerAddressPerMinute = SettingKey<Int>("auth.failedLoginsPerAddressPerMinute", 30, help: "Failed logins per client address per minute, whatever the usernames (a rate, not a lock-out: past it a login from that address gets 429 with Retry-After until the next one is allowed, seconds). 0 turns it off.")
    public static let authFailedLoginsPerAddressBurst = SettingKey<Int>("auth.failedLoginsPerAddressBurst", 60, help: "Failed logins one client address may make in a row before auth.failedLoginsPerAddressPerMinute applies.")
    // hostile input: bound of the failed-login table
    public static let authMaxFailedLoginEntries = SettingKey<Int>("auth.maxFailedLoginEntries", 50_000, help: "Entries the failed-login throttle tracks at most; when full, expired and then the oldest entries are dropped.")
    public static let authTokenLeeway = SettingKey<Duration>("auth.tokenLeeway", "60s", integerForm: .init("auth.tokenLeewaySeconds", unit: .seconds(1)), help: "Clock-skew leeway for a bearer token's exp, nbf and iat (RFC 7519 §4.1.4-§4.1.6).")

    /// The `auth.*` keys, in documentation order.
    static let authKeys: [SettingKeys] = [
        .authJwtSecret, .authPasswordIterations, .authTokenLifetime, .authMaxFailedLogins, .authFailedLoginWindow,
        .authFailedLoginsPerAddressPerMinute, .authFailedLoginsPerAddressBurst, .authMaxFailedLoginEntries, .authTokenLeeway,
    ]
}

extension DomainConfiguration {
    init(reader: AppConfiguration, jwtSecret: [UInt8]) {
        self.init(jwtSecret: jwtSecret, passwordIterations: reader[.authPasswordIterations],
                  tokenLifetime: reader[.authTokenLifetime],
                  maxFailedLogins: reader[.authMaxFailedLogins],
                  failedLoginWindow: reader[.authFailedLoginWindow],
                  maxFailedLoginEntries: reader[.authMaxFailedLoginEntries],
                  failedLoginsPerAddress: WriteLimiter.Rule(count: reader[.authFailedLoginsPerAddressPerMinute], periodSeconds: 60,
                                                            burst: reader[.authFailedLoginsPerAddressBurst]),
                  tokenLeeway: reader[.authTokenLeeway], writeLimits: WriteLimits.Configuration(reader: reader))
    }
}
