import Foundation
import Logging
import TSDomain
import TSEngineIO
import TSHTTP
import TSAPNs
import TSInspector
import TSRealtime
import TSRoutes
import TSSocketIO
import TSSockets
import TSStorage
import TSTLS
import TSRedis
import TSTestMode

/// The whole server, assembled from an `AppConfiguration`: database (migrated), domain,
/// Socket.IO hub, routes and the HTTP server. `start()` binds; `shutdown()` drains and closes.
public final class TouchSyncServer: @unchecked Sendable {
    // Invariant: every stored property is set in `init` and never reassigned; the objects they
    // point to are themselves thread-safe.
    public let configuration: AppConfiguration
    public let db: Database
    public let domain: TouchSyncDomain
    public let hub: SocketIOServer
    public let http: HTTPServer
    public let logger: Logger
    public let databasePath: String
    /// The realtime events emitted, newest `realtime.eventLogCapacity` kept (test mode, inspector).
    public let eventLog: RealtimeEventLog
    /// HTTP request counters and latency histograms (`/metrics`).
    public let httpMetrics: HTTPMetrics
    /// Background notification pruning and WAL checkpoints (started by `start`, stopped by `shutdown`).
    public let maintenance: StorageMaintenance
    /// Whether the test-target routes are registered (`testMode`).
    public let testMode: Bool
    /// The demo users `--demo` seeds and shows: published passwords on loopback, random ones
    /// elsewhere (`DemoSeeder.users(listeningOn:)`); `demoPasswordsPublished` says which.
    public let demoUsers: [DemoSeeder.DemoUser]
    public let demoPasswordsPublished: Bool
    /// Every (method, pattern) the router serves, in match order (what `/openapi.json` documents).
    public let registeredRoutes: [(method: HTTPMethod, pattern: String)]
    /// HTTPS (tls.*), nil for plain HTTP (TouchSyncServer+TLS.swift).
    public let tls: TLSServerSetup?
    /// The plain port that redirects to HTTPS (tls.redirectPort), nil when off.
    public let httpsRedirect: HTTPServer?
    /// Cross-node fan-out over Redis (realtime.redisUrl), nil when off (TouchSyncServer+Redis.swift).
    public let redisBridge: RedisEventBridge?
    /// Delivers each room's events in commit order (docs/realtime.md "Order").
    public let broadcaster: RealtimeBroadcaster
    /// The migrations this start applied, by their numeric prefix (`0001`), oldest first; empty
    /// when the database was up to date (`touchsync migrate` reports them).
    public let appliedMigrations: [String]

    /// What the process does with the server it assembles.
    public enum Role: Sendable {
        /// Serves requests and signs tokens with the resolved JWT secret (`serve`, `exec`, tests).
        case server
        /// A one-shot command on the database (`migrate`, `token`, `export`, `import`): the
        /// advice about where the JWT secret comes from, meant for whoever runs a server, is
        /// logged at debug level instead of as a warning.
        case tool
    }

    /// Backups while serving (backup.directory), nil when off (TouchSyncServer+Backup.swift).
    public let backups: ScheduledBackups?
    /// Held while the SQLite database is open, so `touchsync restore` refuses (DatabaseLock).
    let databaseLock: DatabaseLock?
    /// Held while serving a SQLite file, so a second server on it refuses (DatabaseLock.serving).
    let servingLock: DatabaseLock?

    public init(configuration: AppConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
                clock: any MonotonicClock = SystemClock(), wallClock: any WallClock = SystemWallClock(),
                delivery: (any NotificationDelivery)? = nil, role: Role = .server) throws {
        self.configuration = configuration
        let logger = Logger(label: "touchsync")
        self.logger = logger
        let secretAdvice: Logger.Level = role == .server ? .warning : .debug
        let production = environment["TOUCHSYNC_ENV"] == "production"
        testMode = configuration[.testMode]
        if testMode && production {
            throw ConfigurationError("test mode (--test-mode / testMode) is refused with TOUCHSYNC_ENV=production: "
                                     + "it serves unauthenticated routes that delete all data. Unset TOUCHSYNC_ENV or turn test mode off.")
        }

        // The listener's settings, checked before anything is opened (an unavailable poller would fail later).
        var http = try HTTPServerConfiguration(reader: configuration)
        http.clock = clock
        (demoUsers, demoPasswordsPublished) = DemoSeeder.users(listeningOn: http.host)

        // Storage: open, migrate. database.url (postgres://…) selects PostgreSQL; else the SQLite file.
        let path = configuration[.databasePath]
        let databaseURL = configuration[.databaseUrl].flatMap { $0.isEmpty ? nil : $0 }
        databasePath = databaseURL.map(PostgresURL.redact) ?? path
        try Self.prepareDatabaseFolder(path)  // with database.url this folder still holds the generated JWT secret
        let dbConfig = try DatabaseConfiguration(reader: configuration)
        // One server per SQLite file unless Redis carries the events between them: a second would
        // split realtime (DatabaseLock.serving).
        let sharesEvents = !(configuration[.realtimeRedisUrl] ?? "").isEmpty
        servingLock = role == .server && databaseURL == nil && path != ":memory:" && !sharesEvents ? try Self.lockServing(path: path) : nil
        databaseLock = try Self.lockDatabase(path: path, postgres: databaseURL != nil)  // backup hook
        if let databaseURL {
            guard PostgresURL.isPostgres(databaseURL) else {
                throw ConfigurationError("database.url (TOUCHSYNC_DATABASE_URL, --database-url) must be postgres://user:pass@host:port/db; "
                                         + "for SQLite set database.path instead")
            }
            db = try Database(url: databaseURL, configuration: dbConfig, logger: Logger(label: "touchsync.storage"))
            if configuration[.authJwtSecret] == nil {
                logger.log(level: secretAdvice, "database.url is set but auth.jwtSecret is not: this node's generated secret will not be shared; nodes sharing one database need the same TOUCHSYNC_JWT_SECRET")
            }
        } else {
            db = try Database(path: path, configuration: dbConfig, logger: Logger(label: "touchsync.storage"))
        }
        appliedMigrations = try Self.migrate(db, configuration: configuration, logger: logger)

        // Domain and realtime.
        let secret = try SecretStore.resolve(configured: configuration[.authJwtSecret], databasePath: path,
                                             production: production, logger: logger, adviceLevel: secretAdvice)
        var realtime = try RealtimeConfiguration(reader: configuration)
        // The broadcaster's own reads never take more than a quarter of the database's read queue:
        // a burst of events then waits in the broadcaster, and the requests' reads keep their room.
        realtime.maxReadsInFlight = min(realtime.maxReadsInFlight, max(1, dbConfig.maxQueuedReads / 4))
        hub = try SocketIOServer(configuration: SocketIOConfiguration(reader: configuration), clock: clock, logger: Logger(label: "touchsync.realtime"))
        eventLog = RealtimeEventLog(reader: configuration, clock: wallClock)
        eventLog.observe(hub)

        // Push delivery: the log backend unless APNs is configured (dx, TouchSyncServer+APNs.swift).
        let notificationsDelivered = NotificationCounter(apnsOutcomes: APNsProvider.Settings.configured(configuration) ? APNsProvider.Outcome.allCases.map(\.rawValue) : [])
        let delivery = try delivery ?? Self.makeAPNsDelivery(settings: APNsProvider.Settings(reader: configuration), db: db, wallClock: wallClock,
                                                              counter: notificationsDelivered, logger: logger)
        // Built in dependency order, each whole: the broadcaster reads from the database (not the
        // domain), so it and the Redis bridge exist before the domain that publishes to them.
        let redisSettings = try RedisEventBridge.Settings(reader: configuration)
        let recovery = Self.makeClusterRecovery(settings: redisSettings, hub: hub, wallClock: wallClock)
        let broadcaster = RealtimeBroadcaster(hub: hub, reads: DatabaseRecipientReads(db: db), configuration: realtime, clock: clock,
                                              recovery: recovery, logger: Logger(label: "touchsync.realtime"))
        self.broadcaster = broadcaster
        // redis hook: publish to other nodes first (an enqueue), then deliver locally as before.
        redisBridge = try Self.makeRedisBridge(settings: redisSettings, local: broadcaster, recovery: recovery, hub: hub)
        let events = FanoutEventPublisher((redisBridge.map { [$0] } ?? []) + [broadcaster])
        // Test mode's domain time can be moved (`/api/test/clock`); no other mode's can.
        let domainClock: any WallClock = testMode ? MovableWallClock(base: wallClock) : wallClock
        domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(reader: configuration, jwtSecret: secret), events: events, delivery: delivery, clock: domainClock, logger: Logger(label: "touchsync.notifications"))
        RealtimeHandlers(domain: domain, broadcaster: broadcaster).install()
        maintenance = StorageMaintenance(db: db, notifications: domain.notifications, configuration: .init(reader: configuration),
                                         logger: Logger(label: "touchsync.storage"))
        domain.notifications.onDelivered.set { n in notificationsDelivered.add(n) }
        let httpMetrics = HTTPMetrics()
        self.httpMetrics = httpMetrics

        // Routes, frozen before serving.
        var router = RouterBuilder()
        // A logout revokes the user's tokens: their live sockets go too (Socket.IO DISCONNECT).
        let logoutHub = hub
        let bridge = redisBridge
        let trustedProxies = try TrustedProxies(reader: configuration)
        // One chain of middleware in front of every route (RequestPipeline): validation against the
        // OpenAPI operation, then in test mode the /api/test/* access check and, on /api/** changes,
        // the wait for the change's events (docs/realtime.md "Order"), so the test that made a
        // change finds its events in /api/test/events.
        let pipeline = RequestPipeline(authenticator: Authenticator(auth: domain.auth),
                                       testAccess: testMode ? TestModeAccess(token: configuration[.testModeToken], trustedProxies: trustedProxies) : nil,
                                       afterWrites: testMode ? FlushAfterWrites { await broadcaster.flush() } : nil)
        var api = RouteTable()
        APIRoutes(domain: domain, trustedProxies: trustedProxies, onLogout: { userId in
            for socket in logoutHub.sockets(inRoom: RealtimeConfiguration.userChannel(userId)) { socket.disconnect() }
            bridge?.publishLogout(userId: userId)  // redis hook: and on the other nodes
        }).register(into: &api)
        pipeline.mount(api, into: &router)
        backups = try ScheduledBackups.make(configuration: .init(reader: configuration), databasePath: path, postgres: databaseURL != nil,
                                            logger: Logger(label: "touchsync.backup"))  // backup hook
        let metricsAccess = try MetricsAccess(reader: configuration, trustedProxies: trustedProxies, production: production)
        OperationsRoutes(domain: domain, version: BuildInfo.version,
                         components: (bridge.map { b in [HealthComponent(name: "redis") { b.health }] } ?? [])
                             + (backups.map { [$0.health] } ?? []), detailAccess: metricsAccess).register(into: &router)
        let httpBox = SetOnce<HTTPServer>()
        MetricsRoutes(http: httpMetrics, hub: hub, db: db, notifications: notificationsDelivered, version: BuildInfo.version,
                      tcpConnections: { httpBox.value?.openConnections ?? 0 },
                      extra: Self.extraMetrics(redis: bridge, broadcaster: broadcaster, backups: backups), access: metricsAccess).register(into: &router)
        let openAPI = OpenAPIRoutes(version: BuildInfo.version)
        openAPI.register(into: &router)
        let requestLog = Self.registerInspector(into: &router, settings: InspectorRoutes.Settings(reader: configuration), production: production,
                                                demo: configuration[.demo] ? demoUsers : nil, testMode: testMode, host: http.host, trustedProxies: trustedProxies, domain: domain,
                                                hub: hub, eventLog: eventLog, httpMetrics: httpMetrics, logger: logger)
        if testMode {
            let testRoutes = TestRoutes(domain: domain, broadcaster: broadcaster, eventLog: eventLog, logger: Logger(label: "touchsync.test"),
                                        faultMaxBufferedBytes: configuration[.realtimeFaultMaxBufferedBytes], cluster: redisBridge)
            testRoutes.register(into: &router)
            // An app's test set-up is a burst (600 elements as one user, an account per test): the
            // write limits start off; a test turns them on with POST /api/test/limits.
            domain.writeLimits.setActive(false)
            // redis hook: a reset or fixtures load on any node reaches every test-mode node.
            redisBridge?.enableTestMode(testRoutes.localNode,
                                        label: "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier)")
            if (configuration[.testModeToken] ?? "").isEmpty {
                logger.warning("test mode is on: /api/test/* answer this machine only (loopback, not forwarded by a proxy); set testModeToken (TOUCHSYNC_TEST_MODE_TOKEN) to reach them from a container's host or a CI runner")
            } else {
                logger.warning("test mode is on: /api/test/* answer any address that sends X-TouchSync-Test: <testModeToken>")
            }
        }
        let hub = self.hub
        hub.mount(on: &router)

        // Every other route behind the same chain (the API's routes have theirs).
        pipeline.install(into: &router, mounted: api)
        let tlsConfiguration = TLSServerSetup.Configuration(reader: configuration)
        tls = try Self.makeTLS(configuration: tlsConfiguration, logger: logger)  // tls hook
        http.connectionTransform = tls?.transformFactory
        let frozen = router.freeze(logger: Logger(label: "touchsync.http"))
        registeredRoutes = frozen.registeredRoutes
        openAPI.setRoutes(registeredRoutes)
        // The inspector's request list (dx, TouchSyncServer+Inspector.swift) records around the router.
        let responder: any HTTPResponder = requestLog.map { log in
            MiddlewareResponder(InspectorRequestRecorder(log: log, nowMs: { wallClock.nowMicroseconds() / 1000 }), around: frozen)
        } ?? frozen
        self.http = HTTPServer(configuration: http, responder: responder, logger: Logger(label: "touchsync.http"), observer: httpMetrics)
        httpBox.set(self.http)
        httpsRedirect = try Self.makeRedirectServer(port: tlsConfiguration.redirectPort, tls: tls, https: self.http, health: frozen)  // tls hook
    }

    /// Applies pending migrations; a changed, already-applied one stops the start naming the file.
    static func migrate(_ db: Database, configuration: AppConfiguration, logger: Logger) throws -> [String] {
        let applied = try EmbeddedMigrations.migrator(configuration: configuration, logger: logger).migrate(db)
        for m in applied { logger.info("applied migration \(m.fileName)") }
        return applied.map { String($0.fileName.prefix { $0 != "_" }) }
    }

    /// Binds and starts serving; returns the bound port (useful with port 0).
    /// `handleSIGHUP`: with TLS on, SIGHUP reloads the certificate (`touchsync serve` passes
    /// true; in-process test servers leave the process's signals alone).
    @discardableResult
    public func start(handleSIGHUP: Bool = false) throws -> Int {
        let port = try http.start()
        if let loops = http.eventLoopGroup?.loops { broadcaster.runDrains(on: loops.map { EventLoopTaskExecutor(loop: $0) }) }
        maintenance.start()
        backups?.start()  // backup hook
        redisBridge?.start()  // redis hook
        startTLSRotation(handleSIGHUP: handleSIGHUP)  // tls hook
        if let httpsRedirect {  // tls hook
            do { try httpsRedirect.start() } catch { Task { [http] in await http.shutdown() }; throw error }
        }
        return port
    }

    public var port: Int { http.port }

    /// Stops accepting, closes every socket's transport as the reference server does (a WebSocket
    /// Close frame / the pending poll's connection closed unanswered; no Socket.IO DISCONNECT, so clients
    /// reconnect), closes idle connections, lets in-flight requests finish (bounded by
    /// `server.shutdownGrace`), then closes the database.
    public func shutdown() async {
        let hub = self.hub
        tls?.stop()  // tls hook
        await httpsRedirect?.shutdown()
        await http.shutdown(notify: { hub.shutdown(reason: EngineCloseReason.serverShutdown) })
        hub.disconnectAll(reason: EngineCloseReason.serverShutdown)
        await redisBridge?.stop()  // redis hook
        await domain.notifications.stop()
        await maintenance.stop()
        await backups?.stop()  // backup hook
        db.close()
        databaseLock?.release()
        servingLock?.release()
    }
}
