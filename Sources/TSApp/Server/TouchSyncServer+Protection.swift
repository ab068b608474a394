import TSDomain
import TSRoutes

/// The settings of protected mode, read for `TouchSyncServer.init` (the per-user write limits: DomainConfiguration+Settings.swift).
extension TouchSyncServer {
    /// Who may read `/metrics` besides this machine (`metrics.allowFrom`, `metrics.token`).
    static func metricsAccess(_ configuration: AppConfiguration, trustedProxies: TrustedProxies) throws -> MetricsAccess {
        do {
            return MetricsAccess(allowFrom: try AddressRanges(configuration[.metricsAllowFrom]),
                                 token: configuration[.metricsToken], trustedProxies: trustedProxies)
        } catch {
            throw ConfigurationError("metrics.allowFrom: \(error)")
        }
    }
}
