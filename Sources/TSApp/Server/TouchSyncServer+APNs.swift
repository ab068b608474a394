import Foundation
import Logging
import TSAPNs
import TSDomain
import TSRoutes
import TSStorage

extension TouchSyncServer {
    /// APNs is on when `apns.keyFile` is set (docs/apns.md); the log backend stays the default.
    static func apnsConfigured(_ configuration: AppConfiguration) -> Bool {
        configuration[.apnsKeyFile].map { !$0.isEmpty } ?? false
    }

    /// The APNs provider when configured, else nil (the domain then logs deliveries). A half-done
    /// configuration stops the start with a message naming the missing setting.
    static func makeAPNsDelivery(configuration: AppConfiguration, db: Database, wallClock: any WallClock, counter: NotificationCounter,
                                 logger: Logger) throws -> (any NotificationDelivery)? {
        guard apnsConfigured(configuration), let keyFile = configuration[.apnsKeyFile] else { return nil }
        func required(_ key: SettingKey<String?>) throws -> String {
            guard let v = configuration[key], !v.isEmpty else {
                throw ConfigurationError("apns.keyFile is set, so \(key.path) is required too (docs/apns.md)")
            }
            return v
        }
        let keyId = try required(.apnsKeyId), teamId = try required(.apnsTeamId), topic = try required(.apnsTopic)
        let environment = configuration[.apnsEnvironment]
        guard let standard = APNsProvider.Configuration.endpoint(environment: environment) else {
            throw ConfigurationError("apns.environment must be sandbox or production (got \(environment))")
        }
        let endpoint = configuration[.apnsEndpoint].flatMap { $0.isEmpty ? nil : $0 } ?? standard
        guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://") else {
            throw ConfigurationError("apns.endpoint must be an https:// URL (http:// only for a local HTTP/2 test server)")
        }
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw ConfigurationError("apns.keyFile \(keyFile) cannot be read")
        }
        let token: APNsProviderToken
        do {
            token = try APNsProviderToken(pem: pem, keyId: keyId, teamId: teamId,
                                          refreshSeconds: configuration[.apnsTokenRefresh].settingSeconds)
        } catch { throw ConfigurationError("apns.keyFile \(keyFile): \(error)") }
        var c = APNsProvider.Configuration(endpoint: endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint, topic: topic)
        c.maxRetries = max(0, configuration[.apnsMaxRetries])
        c.retryBaseMilliseconds = max(1, configuration[.apnsRetryBase].settingMilliseconds)
        c.requestTimeoutMilliseconds = max(100, configuration[.apnsRequestTimeout].settingMilliseconds)
        c.caFile = configuration[.apnsCaFile].flatMap { $0.isEmpty ? nil : $0 }
        let provider: APNsProvider
        do {
            provider = try APNsProvider(configuration: c, token: token, db: db, logger: Logger(label: "touchsync.apns"),
                                        nowSeconds: { wallClock.nowSeconds() }, onOutcome: { counter.count(apnsOutcome: $0.rawValue) })
        } catch { throw ConfigurationError("APNs: \(error)") }
        logger.notice("push notifications go to APNs at \(c.endpoint) (topic \(topic), key \(keyId))")
        return provider
    }
}
