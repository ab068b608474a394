import TSRoutes

/// Who may read `/metrics` besides this machine (`metrics.*`).
extension SettingKeys {
    // metrics: who may scrape /metrics besides this machine.
    public static let metricsAllowFrom = SettingKey<[String]>("metrics.allowFrom", [], help: "Addresses or CIDR ranges (IPv4 and IPv6, e.g. 10.0.0.0/8, 2001:db8::/32) whose TCP peer may read /metrics; loopback may too, except with TOUCHSYNC_ENV=production. Others get 403 unless they send metrics.token.")
    public static let metricsToken = SettingKey<String?>("metrics.token", nil, help: "When set, /metrics also answers requests with Authorization: Bearer <token> from any address (a wrong token is 401).")

    /// The `metrics.*` keys, in documentation order.
    static let metricsKeys: [SettingKeys] = [
        .metricsAllowFrom, .metricsToken,
    ]
}

extension MetricsAccess {
    /// `metrics.allowFrom` (checked) and `metrics.token`; the trusted proxies are `server.trustedProxies`.
    init(reader: AppConfiguration, trustedProxies: TrustedProxies, production: Bool) throws {
        do {
            self.init(allowFrom: try AddressRanges(reader[.metricsAllowFrom]), token: reader[.metricsToken], trustedProxies: trustedProxies,
                      production: production)
        } catch {
            throw ConfigurationError("metrics.allowFrom: \(error)")
        }
    }
}
