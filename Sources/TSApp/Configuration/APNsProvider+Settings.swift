import TSAPNs

/// APNs push delivery, off unless `apns.keyFile` is set (`apns.*`, docs/apns.md).
extension SettingKeys {
    // APNs push delivery, off unless apns.keyFile is set (docs/apns.md).
    public static let apnsKeyFile = SettingKey<String?>("apns.keyFile", nil, help: "Path of the .p8 signing key from Apple; setting it turns APNs delivery on (otherwise notifications are only logged).")
    public static let apnsKeyId = SettingKey<String?>("apns.keyId", nil, help: "The key's id (10 characters, from the developer account).")
    public static let apnsTeamId = SettingKey<String?>("apns.teamId", nil, help: "The developer team id (the provider token's iss).")
    public static let apnsTopic = SettingKey<String?>("apns.topic", nil, help: "The app's bundle id (the apns-topic header).")
    public static let apnsEnvironment = SettingKey<String>("apns.environment", "sandbox", help: "sandbox (development builds: api.sandbox.push.apple.com) or production (api.push.apple.com).")
    public static let apnsEndpoint = SettingKey<String?>("apns.endpoint", nil, help: "Overrides the host chosen by apns.environment; http:// (HTTP/2 without TLS) only for a local test server.")
    public static let apnsCaFile = SettingKey<String?>("apns.caFile", nil, help: "A CA bundle (PEM) to verify the APNs host with instead of the system's (a local TLS test server, a TLS-inspecting proxy).")
    public static let apnsMaxRetries = SettingKey<Int>("apns.maxRetries", 3, help: "Retries of a request answered 429 or 5xx (or not answered), with exponential backoff.")
    public static let apnsRetryBase = SettingKey<Duration>("apns.retryBase", "500ms", integerForm: .init("apns.retryBaseMs", unit: .milliseconds(1)), help: "The first retry's delay; each next one doubles it.")
    public static let apnsRequestTimeout = SettingKey<Duration>("apns.requestTimeout", "10s", integerForm: .init("apns.requestTimeoutMs", unit: .milliseconds(1)), help: "Total time of one APNs request, connection included.")
    public static let apnsTokenRefresh = SettingKey<Duration>("apns.tokenRefresh", "50m", integerForm: .init("apns.tokenRefreshSeconds", unit: .seconds(1)), help: "Age at which the provider token (ES256 JWT) is signed anew; APNs refuses tokens older than an hour.")

    /// The `apns.*` keys, in documentation order.
    static let apnsKeys: [SettingKeys] = [
        .apnsKeyFile, .apnsKeyId, .apnsTeamId, .apnsTopic, .apnsEnvironment, .apnsEndpoint, .apnsCaFile, .apnsMaxRetries,
        .apnsRetryBase, .apnsRequestTimeout, .apnsTokenRefresh,
    ]
}

extension APNsProvider {
    /// What the provider and its token are built from. The key file is read by the caller.
    struct Settings: Sendable {
        var keyFile: String
        var keyId: String
        var teamId: String
        var tokenRefresh: Duration
        var provider: Configuration

        /// Whether `apns.keyFile` is set (the log backend stays the default otherwise).
        static func configured(_ reader: AppConfiguration) -> Bool { reader[.apnsKeyFile].map { !$0.isEmpty } ?? false }

        /// nil when APNs is off; a half-done configuration stops the start with a message naming
        /// the missing setting.
        init?(reader: AppConfiguration) throws {
            guard Self.configured(reader), let keyFile = reader[.apnsKeyFile] else { return nil }
            func required(_ key: SettingKey<String?>) throws -> String {
                guard let v = reader[key], !v.isEmpty else {
                    throw ConfigurationError("apns.keyFile is set, so \(key.path) is required too (docs/apns.md)")
                }
                return v
            }
            self.keyFile = keyFile
            keyId = try required(.apnsKeyId)
            teamId = try required(.apnsTeamId)
            let topic = try required(.apnsTopic)
            let environment = reader[.apnsEnvironment]
            guard let standard = Configuration.endpoint(environment: environment) else {
                throw ConfigurationError("apns.environment must be sandbox or production (got \(environment))")
            }
            let endpoint = reader[.apnsEndpoint].flatMap { $0.isEmpty ? nil : $0 } ?? standard
            guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://") else {
                throw ConfigurationError("apns.endpoint must be an https:// URL (http:// only for a local HTTP/2 test server)")
            }
            tokenRefresh = reader[.apnsTokenRefresh]
            provider = Configuration(endpoint: endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint, topic: topic)
            provider.maxRetries = max(0, reader[.apnsMaxRetries])
            provider.retryBase = max(.milliseconds(1), reader[.apnsRetryBase])
            provider.requestTimeout = max(.milliseconds(100), reader[.apnsRequestTimeout])
            provider.caFile = reader[.apnsCaFile].flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}
