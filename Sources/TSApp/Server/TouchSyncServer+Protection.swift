import TSDomain
import TSRoutes

/// The settings of protected mode and the per-user write limits, read for `TouchSyncServer.init`.
extension TouchSyncServer {
    /// Who may read `/metrics` besides this machine (`metrics.allowFrom`, `metrics.token`).
    static func metricsAccess(_ configuration: AppConfiguration, trustedProxies: TrustedProxies) throws -> MetricsAccess {
        do {
            return MetricsAccess(allowFrom: try AddressRanges(configuration.stringList("metrics.allowFrom") ?? []),
                                 token: configuration.optionalString("metrics.token"), trustedProxies: trustedProxies)
        } catch {
            throw ConfigurationError("metrics.allowFrom: \(error)")
        }
    }

    /// The `limits.*` settings as the domain's write-limit configuration.
    static func writeLimits(_ configuration: AppConfiguration) -> WriteLimits.Configuration {
        var rules: [WriteLimits.Kind: WriteLimiter.Rule] = [:]
        for kind in WriteLimits.Kind.allCases {
            rules[kind] = WriteLimiter.Rule(perSecond: configuration.int("limits.\(kind.settingName)PerSecond"),
                                            burst: configuration.int("limits.\(kind.settingName)Burst"))
        }
        return WriteLimits.Configuration(enabled: configuration.bool("limits.enabled"), rules: rules,
                                         maxTrackedKeys: max(2, configuration.int("limits.maxTrackedUsers")))
    }
}
