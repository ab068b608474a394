import Dispatch
import TSContract
import TSDomain
import TSHTTP
import TSSocketIO
import TSStorage

/// `GET /metrics` (docs/metrics.md): Prometheus text format. Without credentials only this
/// machine may read it; `MetricsAccess` says who else may (`metrics.allowFrom`, `metrics.token`).
public struct MetricsRoutes: Sendable {
    let http: HTTPMetrics
    let hub: SocketIOServer
    let db: Database
    let notifications: NotificationCounter
    let version: String
    let startedAt: UInt64
    /// TCP connections open on the listener, upgraded ones included (set once the server exists).
    let tcpConnections: @Sendable () -> Int
    /// More families appended at the end (redis hook: the cross-node bridge's counters).
    let extra: (@Sendable (inout PrometheusText) -> Void)?
    let access: MetricsAccess

    public init(http: HTTPMetrics, hub: SocketIOServer, db: Database, notifications: NotificationCounter, version: String,
                tcpConnections: @escaping @Sendable () -> Int, extra: (@Sendable (inout PrometheusText) -> Void)? = nil,
                access: MetricsAccess = MetricsAccess()) {
        self.extra = extra
        self.access = access
        self.http = http
        self.hub = hub
        self.db = db
        self.notifications = notifications
        self.version = version
        self.tcpConnections = tcpConnections
        startedAt = DispatchTime.now().uptimeNanoseconds
    }

    public func register(into router: inout RouterBuilder) {
        let routes = self
        router.get("/metrics") { request in
            switch routes.access.check(request) {
            case .allowed:
                return .bytes(Array(routes.render().utf8), contentType: PrometheusText.contentType, headers: ["Cache-Control": "no-store"])
            case .wrongToken:
                return .json(Envelope.standard.errorBody(code: "UNAUTHORIZED", message: "Wrong bearer token for /metrics (metrics.token)"),
                             status: 401, headers: ["Cache-Control": "no-store", "WWW-Authenticate": "Bearer realm=\"touchsync-metrics\""])
            case let refused:
                return .json(Envelope.standard.errorBody(code: "FORBIDDEN", message: MetricsAccess.refusedMessage(refused)),
                             status: 403, headers: ["Cache-Control": "no-store"])
            }
        }
    }

    public func render() -> String {
        var out = PrometheusText()
        out.family("touchsync_build_info", type: "gauge", help: "Always 1; the version is a label.")
        out.sample("touchsync_build_info", ["version": version], 1)
        out.single("touchsync_uptime_seconds", type: "gauge", help: "Seconds since the server started.",
                   Double((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000) / 1000)

        http.render(into: &out)
        out.single("touchsync_tcp_connections_open", type: "gauge", help: "Open TCP connections, WebSocket ones included.", Double(tcpConnections()))

        let s = hub.stats
        out.family("touchsync_sockets_connected", type: "gauge", help: "Connected Socket.IO sockets by transport.",
                   by: "transport", [("websocket", Double(s.websocketSockets)), ("polling", Double(s.pollingSockets))])
        out.single("touchsync_realtime_rooms", type: "gauge",
                   help: "Socket.IO rooms with at least one socket (TouchSync rooms, per-user rooms and per-socket rooms).", Double(s.rooms))
        out.single("touchsync_realtime_events_emitted_total", type: "counter", help: "Event packets handed to a socket's transport (one per recipient).",
                   Double(s.eventsEmitted))
        out.single("touchsync_realtime_events_dropped_total", type: "counter", help: "Event packets not delivered because the recipient was closed or overflowed.",
                   Double(s.eventsDropped))
        out.single("touchsync_realtime_slow_consumers_disconnected_total", type: "counter",
                   help: "Sockets disconnected because their outbound buffer passed realtime.maxOutboundBytesPerSocket.", Double(s.slowConsumersDisconnected))
        out.single("touchsync_realtime_unconnected_sessions", type: "gauge",
                   help: "Engine.IO sessions without a Socket.IO CONNECT yet (bounded by realtime.maxUnconnectedSessions and realtime.maxUnconnectedSessionsPerAddress).",
                   Double(s.unconnectedSessions))
        out.family("touchsync_realtime_handshakes_refused_total", type: "counter",
                   help: "Engine.IO handshakes refused: per_address (realtime.maxUnconnectedSessionsPerAddress, 403), total (realtime.maxUnconnectedSessions, 503).",
                   by: "reason", [("per_address", Double(s.handshakesRefusedPerAddress)), ("total", Double(s.handshakesRefusedTotal))])
        out.single("touchsync_realtime_connect_timeouts_total", type: "counter",
                   help: "Engine.IO sessions closed because no Socket.IO CONNECT came within realtime.connectTimeout.", Double(s.connectTimeouts))
        out.single("touchsync_realtime_recovery_sessions", type: "gauge",
                   help: "Disconnected sessions kept for connection state recovery.", Double(s.recoverySessions))
        out.family("touchsync_realtime_recovery_sessions_dropped_total", type: "counter",
                   help: "Kept recovery sessions dropped before their window ended: per_user (realtime.connectionStateRecovery.maxSessionsPerUser), total (maxSessions).",
                   by: "reason", [("per_user", Double(s.recoverySessionsEvictedPerUser)), ("total", Double(s.recoverySessionsEvictedTotal))])

        let d = db.stats
        out.single("touchsync_db_write_queue_depth", type: "gauge", help: "Write jobs waiting for the writer (not yet in a transaction).", Double(d.writeQueueDepth))
        out.single("touchsync_db_last_transaction_seconds", type: "gauge", help: "Duration of the last write transaction, BEGIN to COMMIT.",
                   Double(d.lastTransactionNanoseconds) / 1e9)
        out.single("touchsync_db_last_batch_size", type: "gauge", help: "Write jobs in the last group commit.", Double(d.lastBatchSize))
        out.family("touchsync_db_transaction_seconds", type: "summary", help: "Write transactions (group commits) and their total duration.")
        out.sample("touchsync_db_transaction_seconds_sum", [:], Double(d.totalTransactionNanoseconds) / 1e9)
        out.sample("touchsync_db_transaction_seconds_count", [:], Double(d.transactionsCommitted))
        out.family("touchsync_db_write_jobs_total", type: "counter", help: "Write jobs by outcome.",
                   by: "outcome", [("committed", Double(d.jobsCommitted)), ("failed", Double(d.jobsFailed))])
        out.single("touchsync_db_commit_failures_total", type: "counter", help: "COMMITs (or BEGINs) that failed, failing a whole batch.", Double(d.commitFailures))
        if db.dialect == .postgres {
            out.single("touchsync_db_postgres_round_trips_total", type: "counter",
                       help: "Round trips to PostgreSQL the connections waited for (statements, prepares, BEGINs; a read's COMMIT is not waited for).",
                       Double(db.postgresRoundTrips.value))
        }
        let r = db.readPool
        out.single("touchsync_db_readers_busy", type: "gauge", help: "Reader connections running a read.", Double(r.busy))
        out.single("touchsync_db_read_queue_depth", type: "gauge", help: "Reads waiting for a free reader connection.", Double(r.queued))
        out.single("touchsync_db_reads_rejected_total", type: "counter", help: "Reads refused (503) because database.maxQueuedReads reads were waiting.",
                   Double(r.rejected))
        if db.dialect == .sqlite {
            let w = db.walCheckpoints
            out.single("touchsync_db_wal_frames", type: "gauge", help: "Frames in the SQLite WAL after the last commit.", Double(w.walFrames))
            out.family("touchsync_db_wal_checkpoints_total", type: "counter",
                       help: "WAL checkpoints: background passes, the writer's restarts at database.walMaxBytes, restarts readers kept from finishing.",
                       by: "kind", [("passive", Double(w.passes)), ("restart", Double(w.restarts)), ("restart_busy", Double(w.restartsBusy))])
            out.single("touchsync_db_wal_restart_seconds_total", type: "counter", help: "Time the writer spent restarting the WAL (writes waited meanwhile).",
                       Double(w.restartNanoseconds) / 1e9)
        }

        out.single("touchsync_notifications_delivered_total", type: "counter", help: "Push notifications handed to the delivery backend.",
                   Double(notifications.delivered))
        if !notifications.apnsOutcomes.isEmpty {
            out.family("touchsync_apns_requests_total", type: "counter",
                       help: "APNs requests by outcome (delivered, unregistered, bad_device_token, rejected, retried, failed).",
                       by: "outcome", notifications.apnsOutcomes.map { ($0, Double(notifications.apnsCount($0))) })
        }
        extra?(&out)  // redis hook
        return out.text
    }
}
