import Logging
import TSDomain
import TSHTTP
import TSRoutes
import TSSocketIO

extension TouchSyncServer {
    /// Registers the live inspector (`/inspector`, `InspectorRoutes`) when the settings allow it:
    /// `inspector.enabled` (default true; `serve --no-inspector`) and, with
    /// `TOUCHSYNC_ENV=production`, only when `inspector.adminToken` is set. A configured admin
    /// token is required on every inspector request, in any environment.
    static func registerInspector(into router: inout RouterBuilder, configuration: AppConfiguration, production: Bool,
                                  domain: TouchSyncDomain, hub: SocketIOServer, eventLog: RealtimeEventLog, httpMetrics: HTTPMetrics,
                                  logger: Logger) {
        guard configuration.bool("inspector.enabled") else { return }
        let access = InspectorAccess(adminToken: configuration.optionalString("inspector.adminToken"))
        if production && !access.tokenRequired {
            logger.notice("inspector off: with TOUCHSYNC_ENV=production it needs inspector.adminToken (TOUCHSYNC_INSPECTOR_ADMIN_TOKEN)")
            return
        }
        let demoUsers = configuration.bool("demo")
            ? DemoSeeder.users.map { InspectorRoutes.DemoUser(username: $0.username, password: $0.password) } : []
        InspectorRoutes(domain: domain, hub: hub, eventLog: eventLog, httpMetrics: httpMetrics, access: access, demoUsers: demoUsers,
                        version: BuildInfo.version).register(into: &router)
        let host = configuration.string("server.host")
        if !access.tokenRequired && host != "127.0.0.1" && host != "localhost" && host != "::1" {
            let port = configuration.int("server.port")
            logger.warning("the inspector at /inspector shows every realtime event to anyone who can reach \(host):\(port) by IP address; set inspector.adminToken or serve --no-inspector")
        }
    }

    /// Whether `/inspector` is served (for the start-up banner).
    public var servesInspector: Bool { registeredRoutes.contains { $0.pattern == "/inspector" } }
}
