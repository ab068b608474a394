import Logging
import TSDomain
import TSHTTP
import TSInspector
import TSRealtime
import TSRoutes
import TSSocketIO

extension TouchSyncServer {
    /// Registers the live inspector (`/inspector`, `InspectorRoutes`) when its settings allow it:
    /// `inspector.enabled` (default true; `serve --no-inspector`) and, with
    /// `TOUCHSYNC_ENV=production`, only when `inspector.adminToken` is set. A configured admin
    /// token is required on every inspector request, in any environment; without one only requests
    /// from this machine are answered (`InspectorAccess`, `LocalOnly`).
    ///
    /// Returns the request list to record into (`inspector.requestLogCapacity` > 0, never in
    /// production), or nil.
    /// `demo` (the demo users when `--demo`) and `testMode` offer the demo users and editing; `host`
    /// (`server.host`) decides whether protected mode is worth a log line.
    static func registerInspector(into router: inout RouterBuilder, settings: InspectorRoutes.Settings, production: Bool, demo: [DemoSeeder.DemoUser]?, testMode: Bool,
                                  host: String, trustedProxies: TrustedProxies, domain: TouchSyncDomain, hub: SocketIOServer, eventLog: RealtimeEventLog,
                                  httpMetrics: HTTPMetrics, logger: Logger) -> InspectorRequestLog? {
        guard settings.enabled else { return nil }
        let access = InspectorAccess(adminToken: settings.adminToken, trustedProxies: trustedProxies)
        if production && !access.tokenRequired {
            logger.notice("inspector off: with TOUCHSYNC_ENV=production it needs inspector.adminToken (TOUCHSYNC_INSPECTOR_ADMIN_TOKEN)")
            return nil
        }
        let demoUsers = (demo ?? []).map { InspectorRoutes.DemoUser(username: $0.username, password: $0.password) }
        let capacity = settings.requestLogCapacity
        let requestLog = production || capacity <= 0 ? nil
            : InspectorRequestLog(capacity: capacity, maxBodyBytes: settings.requestLogMaxBodyBytes)
        // Test or demo mode (never production: both are refused or local-only there) may change data from the page.
        let editable = !production && (testMode || demo != nil)
        InspectorRoutes(domain: domain, hub: hub, eventLog: eventLog, httpMetrics: httpMetrics, access: access, demoUsers: demoUsers,
                        version: BuildInfo.version, editable: editable, requestLog: requestLog,
                        maxPageSize: settings.maxPageSize).register(into: &router)
        if !access.tokenRequired && host != "127.0.0.1" && host != "localhost" && host != "::1" {
            logger.notice("the inspector answers only requests from this machine (protected mode): other addresses get 403 until inspector.adminToken (TOUCHSYNC_INSPECTOR_ADMIN_TOKEN) is set")
        }
        return requestLog
    }

    /// Whether `/inspector` is served (for the start-up banner).
    public var servesInspector: Bool { registeredRoutes.contains { $0.pattern == "/inspector" } }
}
