import Foundation
import Logging
import TSAPNs
import TSDomain
import TSRoutes
import TSStorage

extension TouchSyncServer {
    /// The APNs provider when configured (`APNsProvider.Settings`, docs/apns.md), else nil (the
    /// domain then logs deliveries). An unreadable or unusable key file stops the start.
    static func makeAPNsDelivery(settings: APNsProvider.Settings?, db: Database, wallClock: any WallClock, counter: NotificationCounter,
                                 logger: Logger) throws -> (any NotificationDelivery)? {
        guard let settings else { return nil }
        guard let pem = try? String(contentsOfFile: settings.keyFile, encoding: .utf8) else {
            throw ConfigurationError("apns.keyFile \(settings.keyFile) cannot be read")
        }
        let token: APNsProviderToken
        do {
            token = try APNsProviderToken(pem: pem, keyId: settings.keyId, teamId: settings.teamId, refreshInterval: settings.tokenRefresh)
        } catch { throw ConfigurationError("apns.keyFile \(settings.keyFile): \(error)") }
        let c = settings.provider
        let provider: APNsProvider
        do {
            provider = try APNsProvider(configuration: c, token: token, db: db, logger: Logger(label: "touchsync.apns"),
                                        nowSeconds: { wallClock.nowSeconds() }, onOutcome: { counter.count(apnsOutcome: $0.rawValue) })
        } catch { throw ConfigurationError("APNs: \(error)") }
        logger.notice("push notifications go to APNs at \(c.endpoint) (topic \(c.topic), key \(settings.keyId))")
        return provider
    }
}
