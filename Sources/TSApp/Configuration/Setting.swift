import TSJSON

/// One configuration setting: its dotted path in the JSON config file, its environment
/// variable, its default and what it means. `Setting.all` is the single source of truth for
/// defaults, loading, validation and the documentation (README, `config/touchsync.example.json`).
public struct Setting: Sendable {
    public enum Kind: Sendable { case string, int, bool, stringList, optionalString, optionalStringList, duration }

    public let path: String
    public let kind: Kind
    public let defaultValue: JSONValue
    public let help: String
    /// A `.duration`'s older form as a bare number (`server.idleTimeoutSeconds: 60`), still read.
    public let integerForm: IntegerForm?

    /// The name a `.duration` setting had when it was a number of seconds or milliseconds, and
    /// that unit. A config file, variable or flag may still use it with a number (`60`); the same
    /// name may be the setting's own (`maxDisconnectionDuration`, milliseconds as in socket.io).
    public struct IntegerForm: Sendable {
        public let path: String
        public let unit: Duration
        public init(_ path: String, unit: Duration) { self.path = path; self.unit = unit }
        /// "seconds" or "milliseconds", for messages and the README.
        public var unitName: String { unit == .milliseconds(1) ? "milliseconds" : "seconds" }
        /// `TOUCHSYNC_` + the older name, as for a setting.
        public var environmentName: String { Setting.environmentName(of: path) }
    }

    init(path: String, kind: Kind, defaultValue: JSONValue, help: String, integerForm: IntegerForm? = nil) {
        self.path = path
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.integerForm = integerForm
    }

    /// `TOUCHSYNC_` + the path in SCREAMING_SNAKE_CASE: `realtime.globalEvents` → `TOUCHSYNC_REALTIME_GLOBAL_EVENTS`.
    /// A run of capitals is one word, as people write it: `realtime.allowEIO3` → `TOUCHSYNC_REALTIME_ALLOW_EIO3`.
    public var environmentName: String { Self.environmentName(of: path) }

    static func environmentName(of path: String) -> String {
        var out = "TOUCHSYNC_"
        var previous: Character = "."
        for ch in path {
            if ch == "." {
                out.append("_")
            } else if ch.isUppercase && !previous.isUppercase && previous != "." {
                out.append("_"); out.append(ch)
            } else {
                out.append(Character(ch.uppercased()))
            }
            previous = ch
        }
        return out
    }

    /// The name an underscore before every capital gives (`TOUCHSYNC_REALTIME_ALLOW_E_I_O3`): still
    /// accepted, since it is what earlier documentation printed.
    var spelledOutEnvironmentName: String {
        var out = "TOUCHSYNC_"
        for ch in path {
            if ch == "." { out.append("_") } else if ch.isUppercase { out.append("_"); out.append(ch) } else { out.append(Character(ch.uppercased())) }
        }
        return out
    }

    /// Short environment aliases for the settings people set most.
    public static let environmentAliases: [String: String] = [
        "TOUCHSYNC_HOST": "server.host", "TOUCHSYNC_PORT": "server.port", "TOUCHSYNC_DATABASE": "database.path",
        // TOUCHSYNC_DATABASE_URL is database.url's own environment name (TOUCHSYNC_ + DATABASE_URL).
        "TOUCHSYNC_JWT_SECRET": "auth.jwtSecret", "TOUCHSYNC_LOG_LEVEL": "log.level", "TOUCHSYNC_LOG_FORMAT": "log.format",
        "TOUCHSYNC_REDIS_URL": "realtime.redisUrl",  // cross-node fan-out
    ]

    /// Every setting, in the order of the README table and `config/touchsync.example.json`.
    public static let all: [Setting] = SettingKeys.registry.map(\.setting)

    public static func named(_ path: String) -> Setting? { all.first { $0.path == path } }

    /// The setting a name in a config file or a flag sets: its own name, or the older name of a
    /// `.duration` (then with the unit a bare number counts).
    static func resolve(_ path: String) -> (setting: Setting, integerUnit: Duration?)? {
        for s in all {
            if s.path == path { return (s, s.integerForm?.path == path ? s.integerForm?.unit : nil) }
            if let older = s.integerForm, older.path == path { return (s, older.unit) }
        }
        return nil
    }
}

/// The settings, one typed key each: `configuration[.serverMaxBodyBytes]` is an `Int`, and a
/// misspelt name does not compile. The default and the help text are the documentation.
extension SettingKeys {
    public static let serverHost = SettingKey<String>("server.host", "127.0.0.1", help: "Address to listen on (0.0.0.0 for all interfaces).")
    public static let serverPort = SettingKey<Int>("server.port", 3000, help: "TCP port; 0 picks a free port and prints it.")
    public static let serverEventLoops = SettingKey<Int>("server.eventLoops", 0, help: "Event-loop threads; 0 = one per core.")
    public static let serverPoller = SettingKey<String>("server.poller", "auto",
            help: "Readiness backend of the event loops: auto (epoll on Linux, kqueue on macOS), epoll, kqueue or poll (portable poll(2)).")
    // io_uring sends
    public static let serverIoUring = SettingKey<String>("server.ioUring", "auto",
            help: "Whether an event loop sends the output of several connections flushed at once (a broadcast) through io_uring, one submission per 256 sends: auto (Linux, when the kernel allows it; else one log line and send(2)) or off (one send(2) per connection). Ignored on macOS.")
    public static let serverMaxConnections = SettingKey<Int>("server.maxConnections", 10_000, help: "Open connections at most; past it a new one gets 503 and is closed.")
    public static let serverMaxRequestLineBytes = SettingKey<Int>("server.maxRequestLineBytes", 8192, help: "Longest request line (414 past it).")
    public static let serverMaxHeaderBytes = SettingKey<Int>("server.maxHeaderBytes", 16_384, help: "Largest header block (431 past it).")
    public static let serverMaxHeaderCount = SettingKey<Int>("server.maxHeaderCount", 100, help: "Most header fields (431 past it).")
    public static let serverMaxBodyBytes = SettingKey<Int>("server.maxBodyBytes", 1_048_576, help: "Largest request body (413 past it).")
    public static let serverHeaderReadTimeout = SettingKey<Duration>("server.headerReadTimeout", "10s", integerForm: .init("server.headerReadTimeoutSeconds", unit: .seconds(1)),
            help: "Time to receive a request head before the connection is closed.")
    public static let serverIdleTimeout = SettingKey<Duration>("server.idleTimeout", "60s", integerForm: .init("server.idleTimeoutSeconds", unit: .seconds(1)),
            help: "Idle keep-alive time before the connection is closed.")
    public static let serverShutdownGrace = SettingKey<Duration>("server.shutdownGrace", "10s", integerForm: .init("server.shutdownGraceSeconds", unit: .seconds(1)),
            help: "On SIGTERM/SIGINT, how long in-flight requests may finish.")
    // hostile input: JSON request bodies
    public static let serverMaxJsonDepth = SettingKey<Int>("server.maxJsonDepth", 64, help: "Deepest nesting of arrays/objects in a JSON request body (400 past it).")
    public static let serverMaxOutboundBytesPerConnection = SettingKey<Int>("server.maxOutboundBytesPerConnection", 4_194_304,
            help: "Unsent bytes an HTTP connection may queue behind the response being sent (one response of any size is exempt) before it is dropped as a slow consumer.")
    // transport: total deadlines and the per-address cap.
    public static let serverBodyReadTimeout = SettingKey<Duration>("server.bodyReadTimeout", "30s", integerForm: .init("server.bodyReadTimeoutSeconds", unit: .seconds(1)),
            help: "Total time to receive a request body after its head, and one WebSocket frame from its first byte (trickled bytes do not extend it); past it 408 (WebSocket: close 1008) and the connection closes.")
    public static let serverOutboundStallTimeout = SettingKey<Duration>("server.outboundStallTimeout", "30s", integerForm: .init("server.outboundStallTimeoutSeconds", unit: .seconds(1)),
            help: "With response or socket bytes pending, the longest a client may read none of them before it is dropped as a slow consumer.")
    public static let serverMinOutboundBytesPerSecond = SettingKey<Int>("server.minOutboundBytesPerSecond", 16_384,
            help: "Slowest overall rate a client must read pending bytes at: they must be gone within server.outboundStallTimeout + bytes/rate, a total deadline (0 turns it off).")
    public static let serverMaxConnectionsPerAddress = SettingKey<Int>("server.maxConnectionsPerAddress", 256,
            help: "Open connections from one client IP address; past it a new one from that address gets 503 and is closed while other addresses are still served (0 turns the cap off).")
    public static let serverTrustedProxies = SettingKey<[String]>("server.trustedProxies", [],
            help: "Reverse proxies (IPs or IPv4 networks a.b.c.d/n) whose X-Forwarded-For names the client: the login throttle then counts the real client, not the proxy. Anyone else's X-Forwarded-For is ignored.")
    // TLS: HTTPS/WSS on the listener.
    public static let tlsCertificateFile = SettingKey<String?>("tls.certificateFile", nil,
            help: "PEM certificate chain (leaf first) for HTTPS on the listener (serve --tls-cert); with tls.privateKeyFile set the server speaks only HTTPS/WSS. Reloaded on SIGHUP or when the file changes (docs/tls.md). Linux builds only.")
    public static let tlsPrivateKeyFile = SettingKey<String?>("tls.privateKeyFile", nil,
            help: "Unencrypted PEM private key of tls.certificateFile (serve --tls-key).")
    public static let tlsHandshakeTimeout = SettingKey<Duration>("tls.handshakeTimeout", "10s", integerForm: .init("tls.handshakeTimeoutSeconds", unit: .seconds(1)),
            help: "Total time from accept to a finished TLS handshake (a trickled ClientHello does not extend it); past it the connection is closed with a log line.")
    public static let tlsMaxConcurrentHandshakes = SettingKey<Int>("tls.maxConcurrentHandshakes", 1024,
            help: "TLS handshakes past their first ClientHello byte in progress at once across the server (each holds a TLS session and its buffers, about 48 KiB, and costs a private-key operation: 1024 is about 48 MiB); past it such a connection is closed with a log line. Silent connections are bounded per address by tls.maxHandshakesPerAddress (0 turns the bound off).")
    // tls: a silent connection must not hold a handshake slot others need.
    public static let tlsMaxHandshakesPerAddress = SettingKey<Int>("tls.maxHandshakesPerAddress", 32,
            help: "TLS handshakes in progress at once from one client IP address, silent connections (no ClientHello yet) included; past it a new connection from that address is closed at once with a log line while other addresses are served (0 turns the bound off).")
    public static let tlsReloadCheckInterval = SettingKey<Duration>("tls.reloadCheckInterval", "60s", integerForm: .init("tls.reloadCheckSeconds", unit: .seconds(1)),
            help: "How often the certificate and key files are checked for a change (then reloaded for new connections; SIGHUP reloads at once); 0 turns the check off.")
    public static let tlsRedirectPort = SettingKey<Int>("tls.redirectPort", 0,
            help: "With HTTPS on, a second plain-HTTP port on server.host that answers 308 to the same URL on https:// (GET /health is served as is); 0 = none.")
    public static let databasePath = SettingKey<String>("database.path", "./data/touchsync.sqlite", help: "SQLite file, or :memory:.")
    public static let databaseSynchronous = SettingKey<String>("database.synchronous", "FULL", help: "SQLite synchronous mode in WAL: FULL (fsync each group commit) or NORMAL.")
    public static let databaseBusyTimeout = SettingKey<Duration>("database.busyTimeout", "5s", integerForm: .init("database.busyTimeoutMs", unit: .milliseconds(1)),
            help: "SQLite busy timeout.")
    public static let databaseReaders = SettingKey<Int>("database.readers", 2, help: "Read-only connections in the pool.")
    public static let databaseMaxWriteBatch = SettingKey<Int>("database.maxWriteBatch", 64, help: "Most write jobs committed in one group commit.")
    public static let databaseMigrationsDir = SettingKey<String?>("database.migrationsDir", nil, help: "Directory of NNNN_*.sql migrations to use instead of the ones built into the binary (null: the built-in ones); PostgreSQL's are in its postgres/ subdirectory.")
    // PostgreSQL as the shared storage of several nodes (docs/storage-postgres.md).
    public static let databaseUrl = SettingKey<String?>("database.url", nil,
            help: "postgres://user:pass@host:port/db selects PostgreSQL instead of the SQLite file database.path (serve --database-url). Linux builds only.")
    public static let databaseConnectTimeout = SettingKey<Duration>("database.connectTimeout", "5s",
            help: "PostgreSQL: the longest one connection attempt may take (libpq connect_timeout, whole seconds, at least 1s).")
    public static let databaseStatementTimeout = SettingKey<Duration>("database.statementTimeout", "30s",
            help: "PostgreSQL: statement_timeout of every session; a statement running longer is cancelled by the server (0s = no limit).")
    public static let databaseReconnectInitialBackoff = SettingKey<Duration>("database.reconnectInitialBackoff", "250ms",
            help: "PostgreSQL: wait before the first reconnection attempt after the database became unreachable; doubles after each failed attempt.")
    public static let databaseReconnectMaxBackoff = SettingKey<Duration>("database.reconnectMaxBackoff", "10s",
            help: "PostgreSQL: the longest wait between two reconnection attempts (while unreachable, requests get 503 UNAVAILABLE at once).")
    public static let databaseStartupWait = SettingKey<Duration>("database.startupWait", "30s",
            help: "PostgreSQL: how long start-up keeps retrying an unreachable database before giving up (0s = one attempt).")
    public static let databaseMaxWriteRetries = SettingKey<Int>("database.maxWriteRetries", 3,
            help: "PostgreSQL: re-runs of a write lost to a serialization failure, a deadlock or a lost connection (each job alone) before its error is returned.")
    // storage: the read queue, the WAL bound, notification pruning.
    public static let databaseMaxQueuedReads = SettingKey<Int>("database.maxQueuedReads", 1024,
            help: "Reads waiting for a free reader connection at most; past it a request gets 503 UNAVAILABLE with Retry-After.")
    public static let databaseJournalSizeLimitBytes = SettingKey<Int>("database.journalSizeLimitBytes", 67_108_864,
            help: "SQLite journal_size_limit: the WAL file is cut back to at most this many bytes after a checkpoint (-1 = no limit).")
    public static let databaseWalAutocheckpointPages = SettingKey<Int>("database.walAutocheckpointPages", 10_000,
            help: "SQLite wal_autocheckpoint: a checkpoint runs after a commit that leaves the WAL this many pages long (0 = off).")
    public static let databaseCheckpointInterval = SettingKey<Duration>("database.checkpointInterval", "60s",
            help: "Time between background wal_checkpoint(TRUNCATE)s, which never wait for readers (0s = off).")
    // toggle: the write path's I/O per commit.
    public static let databaseMmapSizeBytes = SettingKey<Int>("database.mmapSizeBytes", 268_435_456,
            help: "SQLite mmap_size of every connection: database pages are read through a memory map of at most this many bytes instead of one pread each (0 = off).")
    public static let databaseWriterCacheBytes = SettingKey<Int>("database.writerCacheBytes", 33_554_432,
            help: "SQLite cache_size of the writer connection in bytes: the pages group commits touch stay cached instead of being read back from the WAL.")
    public static let notificationsRetention = SettingKey<Duration>("notifications.retention", "30d",
            help: "Delivered notifications older than this are deleted in the background (0s = keep forever); undelivered ones are kept.")
    public static let notificationsMaxPerUser = SettingKey<Int>("notifications.maxPerUser", 1000,
            help: "Newest notifications kept per user's feed (and per room's feed of new elements); older delivered ones are deleted (0 = no cap).")
    public static let notificationsPruneInterval = SettingKey<Duration>("notifications.pruneInterval", "5m",
            help: "Time between background pruning rounds of notifications (0s = off).")
    public static let notificationsPruneBatchSize = SettingKey<Int>("notifications.pruneBatchSize", 500,
            help: "Rows deleted per write while pruning, so the writer is never held long.")
    // Backups while serving (docs/backup.md): SQLite only; PostgreSQL uses pg_dump.
    public static let backupDirectory = SettingKey<String?>("backup.directory", nil,
            help: "Directory for scheduled backups of the SQLite database (touchsync-YYYYMMDDTHHMMSS.mmmZ.sqlite, each checked with integrity_check); null turns them off.")
    public static let backupInterval = SettingKey<Duration>("backup.interval", "6h",
            help: "Time between scheduled backups; the first is due an interval after the newest backup already in backup.directory (at start when there is none).")
    public static let backupKeep = SettingKey<Int>("backup.keep", 7,
            help: "Newest scheduled backups kept in backup.directory; older ones are deleted after each backup (0 = keep all).")
    public static let authJwtSecret = SettingKey<String?>("auth.jwtSecret", nil,
            help: "HS256 secret. When null a random one is generated and stored beside the database (refused with TOUCHSYNC_ENV=production).")
    public static let authPasswordIterations = SettingKey<Int>("auth.passwordIterations", 210_000, help: "PBKDF2-HMAC-SHA256 iterations for password hashes.")
    public static let authTokenLifetime = SettingKey<Duration>("auth.tokenLifetime", "30d", integerForm: .init("auth.tokenLifetimeSeconds", unit: .seconds(1)),
            help: "Lifetime of tokens from register/login (30 days).")
    public static let authMaxFailedLogins = SettingKey<Int>("auth.maxFailedLogins", 10,
            help: "Failed logins per (username, client address), or per address for unknown usernames, within the window before 429 RATE_LIMITED (0 turns it off).")
    public static let authFailedLoginWindow = SettingKey<Duration>("auth.failedLoginWindow", "5m", integerForm: .init("auth.failedLoginWindowSeconds", unit: .seconds(1)),
            help: "The window of auth.maxFailedLogins.")
    // hostile input: bound of the failed-login table
    public static let authMaxFailedLoginEntries = SettingKey<Int>("auth.maxFailedLoginEntries", 50_000,
            help: "Entries the failed-login throttle tracks at most; when full, expired and then the oldest entries are dropped.")
    // limits: per-user write limits (docs/limits.md).
    public static let limitsEnabled = SettingKey<Bool>("limits.enabled", true,
            help: "Per-user write limits (limits.*PerSecond / limits.*Burst): past them a write gets 429 RATE_LIMITED with Retry-After (Socket.IO: an ack error RATE_LIMITED). false turns every one off (benchmarks).")
    public static let limitsElementWritesPerSecond = SettingKey<Int>("limits.elementWritesPerSecond", 60,
            help: "Element creates, updates and deletes (and room clears) per user per second, on average (0 = no limit). Dragging an element sends an update per frame.")
    public static let limitsElementWritesBurst = SettingKey<Int>("limits.elementWritesBurst", 300, help: "Element writes one user may make in a row before limits.elementWritesPerSecond applies.")
    public static let limitsMessagesPerSecond = SettingKey<Int>("limits.messagesPerSecond", 10, help: "Chat messages per user per second, on average (0 = no limit).")
    public static let limitsMessagesBurst = SettingKey<Int>("limits.messagesBurst", 30, help: "Messages one user may send in a row.")
    public static let limitsReactionTogglesPerSecond = SettingKey<Int>("limits.reactionTogglesPerSecond", 20, help: "Reaction toggles per user per second, on average (0 = no limit).")
    public static let limitsReactionTogglesBurst = SettingKey<Int>("limits.reactionTogglesBurst", 60, help: "Reaction toggles one user may make in a row.")
    public static let limitsRoomCreatesPerSecond = SettingKey<Int>("limits.roomCreatesPerSecond", 2, help: "Rooms one user may create per second, on average (0 = no limit).")
    public static let limitsRoomCreatesBurst = SettingKey<Int>("limits.roomCreatesBurst", 20, help: "Rooms one user may create in a row.")
    public static let limitsMembershipChangesPerSecond = SettingKey<Int>("limits.membershipChangesPerSecond", 10,
            help: "Membership changes (add a member, leave, rename a room) per user per second, on average (0 = no limit).")
    public static let limitsMembershipChangesBurst = SettingKey<Int>("limits.membershipChangesBurst", 30, help: "Membership changes one user may make in a row.")
    public static let limitsMaxTrackedUsers = SettingKey<Int>("limits.maxTrackedUsers", 100_000,
            help: "(user, kind of write) budgets tracked at most; when full, the ones refilled completely are dropped first (they hold no information), then the half closest to full.")
    public static let authTokenLeeway = SettingKey<Duration>("auth.tokenLeeway", "60s", integerForm: .init("auth.tokenLeewaySeconds", unit: .seconds(1)),
            help: "Clock-skew leeway for a bearer token's exp, nbf and iat (RFC 7519 §4.1.4-§4.1.6).")
    public static let realtimeGlobalEvents = SettingKey<String>("realtime.globalEvents", "members", help: "Who gets *:global events: members (of the room) or all (every socket).")
    public static let realtimeLegacyJoinEvents = SettingKey<Bool>("realtime.legacyJoinEvents", false, help: "Also send one element:created per element on room:join (old clients).")
    public static let realtimePingInterval = SettingKey<Duration>("realtime.pingInterval", "25s", integerForm: .init("realtime.pingIntervalMs", unit: .milliseconds(1)),
            help: "Engine.IO pingInterval.")
    public static let realtimePingTimeout = SettingKey<Duration>("realtime.pingTimeout", "20s", integerForm: .init("realtime.pingTimeoutMs", unit: .milliseconds(1)),
            help: "Engine.IO pingTimeout.")
    public static let realtimeMaxPayload = SettingKey<Int>("realtime.maxPayload", 1_000_000, help: "Engine.IO maxPayload (bytes per polling request / message).")
    public static let realtimeMaxOutboundBytesPerSocket = SettingKey<Int>("realtime.maxOutboundBytesPerSocket", 1_048_576, help: "Unsent bytes a socket may queue behind the message being sent (one message of any size, e.g. a room's elements:batch, is exempt); past it the slow consumer is disconnected.")
    public static let realtimeCorsAllowedOrigins = SettingKey<[String]>("realtime.corsAllowedOrigins", ["*"], help: "Origins allowed on polling requests (CORS); [\"*\"] allows any.")
    public static let realtimeAllowedOrigins = SettingKey<[String]?>("realtime.allowedOrigins", nil, help: "Origins allowed to open a WebSocket; null allows any.")
    public static let realtimeEventLogCapacity = SettingKey<Int>("realtime.eventLogCapacity", 10_000,
            help: "Emitted realtime events kept in memory for GET /api/test/events (test mode) and the inspector; older ones are evicted.")
    public static let realtimeEventLogMaxBytes = SettingKey<Int>("realtime.eventLogMaxBytes", 16_777_216,
            help: "Approximate payload bytes the event log keeps at most (oldest evicted; one payload over a quarter of it is stored truncated).")
    public static let realtimeFaultMaxBufferedBytes = SettingKey<Int>("realtime.faultMaxBufferedBytes", 1_048_576,
            help: "Test mode: bytes of Socket.IO packets one socket may have held or delayed by POST /api/test/faults (hold, delay); past it the socket is dropped as a slow consumer (docs/test-mode.md).")
    // Socket.IO compatibility: EIO3 and connection state recovery.
    public static let realtimeAllowEIO3 = SettingKey<Bool>("realtime.allowEIO3", false,
            help: "Also accept Engine.IO v3 / Socket.IO v4 protocol clients (EIO=3: socket.io 2.x, Socket.IO-Client-Swift 15 and earlier, python-socketio 4.x); off as in the reference server.")
    public static let realtimeConnectionStateRecoveryMaxDisconnectionDuration = SettingKey<Duration>("realtime.connectionStateRecovery.maxDisconnectionDuration", "0s", integerForm: .init("realtime.connectionStateRecovery.maxDisconnectionDuration", unit: .milliseconds(1)),
            help: "Connection state recovery (socket.io 4.6+): how long a disconnected socket's id, rooms and missed room events are kept for it to reconnect with; 0 turns recovery off.")
    public static let realtimeConnectionStateRecoveryMaxBufferedPackets = SettingKey<Int>("realtime.connectionStateRecovery.maxBufferedPackets", 10_000,
            help: "Room events kept for recovery (oldest dropped first); a client that missed more than this gets a fresh session.")
    public static let realtimeConnectionStateRecoveryMaxBufferedBytes = SettingKey<Int>("realtime.connectionStateRecovery.maxBufferedBytes", 16_777_216,
            help: "Encoded bytes of the events kept for recovery at most (oldest dropped first).")
    // Redis: cross-node fan-out over a Redis stream or pub/sub (docs/realtime-cluster.md).
    public static let realtimeGapWait = SettingKey<Duration>("realtime.gapWait", "500ms",
            help: "How long a room's delivery waits for a missing event number before giving it up (and, with realtime.redisUrl, how long a room's first event waits for earlier ones still on their way from another node).")
    public static let realtimeRedisUrl = SettingKey<String?>("realtime.redisUrl", nil,
            help: "redis://[[user]:password@]host[:port] of the Redis server the nodes of a cluster share for cross-node fan-out (serve --redis-url, TOUCHSYNC_REDIS_URL); null = one node alone: no connection is attempted.")
    public static let realtimeRedisChannelPrefix = SettingKey<String>("realtime.redis.channelPrefix", "touchsync",
            help: "Prefix of the stream key (or pub/sub channel) the nodes exchange domain events on (<prefix>:events); nodes of one cluster must agree.")
    public static let realtimeRedisReconnectMinDelay = SettingKey<Duration>("realtime.redis.reconnectMinDelay", "100ms",
            help: "Delay before the first reconnect to a lost or unreachable Redis; each failed attempt doubles it.")
    public static let realtimeRedisReconnectMaxDelay = SettingKey<Duration>("realtime.redis.reconnectMaxDelay", "5s",
            help: "Longest delay between reconnect attempts.")
    public static let realtimeRedisConnectTimeout = SettingKey<Duration>("realtime.redis.connectTimeout", "5s",
            help: "Total time from connect to a ready Redis connection (AUTH and SUBSCRIBE answered); past it the attempt fails.")
    public static let realtimeRedisPingInterval = SettingKey<Duration>("realtime.redis.pingInterval", "5s",
            help: "A PING on each Redis connection this often; nothing heard back by the next one and the connection is closed and re-opened.")
    public static let realtimeRedisMaxPendingPublishes = SettingKey<Int>("realtime.redis.maxPendingPublishes", 10_000,
            help: "Events waiting to be published (queued while Redis is down, or sent and unanswered) at most; past it an event is not published to other nodes and is counted in /metrics (touchsync_redis_publishes_total{outcome=\"dropped\"}).")
    public static let realtimeRedisMaxPendingBytes = SettingKey<Int>("realtime.redis.maxPendingBytes", 16_777_216,
            help: "Bytes of those waiting events at most (same drop and count past it).")
    public static let realtimeRedisMaxMessageBytes = SettingKey<Int>("realtime.redis.maxMessageBytes", 16_777_216,
            help: "Largest encoded event published or received; a larger one is not published (counted as dropped), a larger one received closes and re-opens the subscriber connection.")
    public static let realtimeRedisMaxInboundBacklog = SettingKey<Int>("realtime.redis.maxInboundBacklog", 10_000,
            help: "Events from other nodes waiting for this node's broadcaster at most; past it one is dropped and counted (touchsync_redis_received_total{outcome=\"dropped\"}).")
    public static let realtimeRedisTransport = SettingKey<String>("realtime.redis.transport", "stream",
            help: "How events travel between nodes: stream (a Redis stream <prefix>:events that each node reads from its last position: a node that lost Redis, or a Redis restarted with its data, catches up in order) or pubsub (nothing kept: what is published while a node is disconnected is lost to it).")
    public static let realtimeRedisStreamMaxLength = SettingKey<Int>("realtime.redis.streamMaxLength", 100_000,
            help: "Entries the stream keeps, about (XADD MAXLEN ~): a node that falls further behind misses the oldest and counts them (touchsync_redis_missed_total).")
    public static let realtimeRedisStreamReadCount = SettingKey<Int>("realtime.redis.streamReadCount", 100,
            help: "Entries one XREAD asks for at most.")
    public static let realtimeRedisStreamBlock = SettingKey<Duration>("realtime.redis.streamBlock", "1s",
            help: "How long one XREAD waits for new entries before it is sent again (kept under half of realtime.redis.pingInterval).")
    public static let inspectorEnabled = SettingKey<Bool>("inspector.enabled", true,
            help: "Serve the live inspector at /inspector (serve --no-inspector turns it off: 404). With TOUCHSYNC_ENV=production it is served only when inspector.adminToken is set.")
    public static let inspectorAdminToken = SettingKey<String?>("inspector.adminToken", nil,
            help: "When set, /inspector and /inspector/api/* require it (Authorization: Bearer <token>, or ?token=<token> on the page) and answer it from any address. Unset: only requests from this machine (TCP peer on loopback, not forwarded for another client) are answered, others get 403. Needed for the inspector with TOUCHSYNC_ENV=production.")
    // metrics: who may scrape /metrics besides this machine.
    public static let metricsAllowFrom = SettingKey<[String]>("metrics.allowFrom", [],
            help: "Addresses or CIDR ranges (IPv4 and IPv6, e.g. 10.0.0.0/8, 2001:db8::/32) whose TCP peer may read /metrics; loopback always may. Others get 403 unless they send metrics.token.")
    public static let metricsToken = SettingKey<String?>("metrics.token", nil,
            help: "When set, /metrics also answers requests with Authorization: Bearer <token> from any address (a wrong token is 401).")
    // inspector: the inspector's data browser and request list.
    public static let inspectorMaxPageSize = SettingKey<Int>("inspector.maxPageSize", 200,
            help: "Most rows one page of the inspector's data browser returns (a larger ?limit= is cut to it).")
    public static let inspectorRequestLogCapacity = SettingKey<Int>("inspector.requestLogCapacity", 100,
            help: "Request/response pairs the inspector's request list keeps (oldest evicted); 0 turns it off. Never on with TOUCHSYNC_ENV=production.")
    public static let inspectorRequestLogMaxBodyBytes = SettingKey<Int>("inspector.requestLogMaxBodyBytes", 16384,
            help: "Bytes of each request and response body the request list keeps (the rest is cut when recorded).")
    // APNs push delivery, off unless apns.keyFile is set (docs/apns.md).
    public static let apnsKeyFile = SettingKey<String?>("apns.keyFile", nil,
            help: "Path of the .p8 signing key from Apple; setting it turns APNs delivery on (otherwise notifications are only logged).")
    public static let apnsKeyId = SettingKey<String?>("apns.keyId", nil, help: "The key's id (10 characters, from the developer account).")
    public static let apnsTeamId = SettingKey<String?>("apns.teamId", nil, help: "The developer team id (the provider token's iss).")
    public static let apnsTopic = SettingKey<String?>("apns.topic", nil, help: "The app's bundle id (the apns-topic header).")
    public static let apnsEnvironment = SettingKey<String>("apns.environment", "sandbox",
            help: "sandbox (development builds: api.sandbox.push.apple.com) or production (api.push.apple.com).")
    public static let apnsEndpoint = SettingKey<String?>("apns.endpoint", nil,
            help: "Overrides the host chosen by apns.environment; http:// (HTTP/2 without TLS) only for a local test server.")
    public static let apnsCaFile = SettingKey<String?>("apns.caFile", nil,
            help: "A CA bundle (PEM) to verify the APNs host with instead of the system's (a local TLS test server, a TLS-inspecting proxy).")
    public static let apnsMaxRetries = SettingKey<Int>("apns.maxRetries", 3, help: "Retries of a request answered 429 or 5xx (or not answered), with exponential backoff.")
    public static let apnsRetryBase = SettingKey<Duration>("apns.retryBase", "500ms", integerForm: .init("apns.retryBaseMs", unit: .milliseconds(1)),
            help: "The first retry's delay; each next one doubles it.")
    public static let apnsRequestTimeout = SettingKey<Duration>("apns.requestTimeout", "10s", integerForm: .init("apns.requestTimeoutMs", unit: .milliseconds(1)),
            help: "Total time of one APNs request, connection included.")
    public static let apnsTokenRefresh = SettingKey<Duration>("apns.tokenRefresh", "50m", integerForm: .init("apns.tokenRefreshSeconds", unit: .seconds(1)),
            help: "Age at which the provider token (ES256 JWT) is signed anew; APNs refuses tokens older than an hour.")
    public static let logLevel = SettingKey<String>("log.level", "info", help: "trace, debug, info, notice, warning, error or critical.")
    public static let logFormat = SettingKey<String>("log.format", "text", help: "text (one line per event) or json.")
    public static let demo = SettingKey<Bool>("demo", false, help: "Seed demo users, rooms, elements, messages and posts on start (if the database is empty).")
    public static let testMode = SettingKey<Bool>("testMode", false,
            help: "Test-target mode: unauthenticated /api/test/reset, /api/test/fixtures, /api/test/events and /api/test/faults (docs/test-mode.md). Refused with TOUCHSYNC_ENV=production.")

    /// Every key, in documentation order (`Setting.all`); `SettingsRegistryTests` checks none is left out.
    static let registry: [SettingKeys] = [
        .serverHost, .serverPort, .serverEventLoops, .serverPoller, .serverIoUring, .serverMaxConnections, .serverMaxRequestLineBytes,
        .serverMaxHeaderBytes, .serverMaxHeaderCount, .serverMaxBodyBytes, .serverHeaderReadTimeout, .serverIdleTimeout,
        .serverShutdownGrace, .serverMaxJsonDepth, .serverMaxOutboundBytesPerConnection, .serverBodyReadTimeout,
        .serverOutboundStallTimeout, .serverMinOutboundBytesPerSecond, .serverMaxConnectionsPerAddress, .serverTrustedProxies,
        .tlsCertificateFile, .tlsPrivateKeyFile, .tlsHandshakeTimeout, .tlsMaxConcurrentHandshakes, .tlsMaxHandshakesPerAddress,
        .tlsReloadCheckInterval, .tlsRedirectPort, .databasePath, .databaseSynchronous, .databaseBusyTimeout, .databaseReaders,
        .databaseMaxWriteBatch, .databaseMigrationsDir, .databaseUrl, .databaseConnectTimeout, .databaseStatementTimeout,
        .databaseReconnectInitialBackoff, .databaseReconnectMaxBackoff, .databaseStartupWait, .databaseMaxWriteRetries,
        .databaseMaxQueuedReads, .databaseJournalSizeLimitBytes, .databaseWalAutocheckpointPages, .databaseCheckpointInterval,
        .databaseMmapSizeBytes, .databaseWriterCacheBytes, .notificationsRetention, .notificationsMaxPerUser, .notificationsPruneInterval,
        .notificationsPruneBatchSize, .backupDirectory, .backupInterval, .backupKeep, .authJwtSecret, .authPasswordIterations, .authTokenLifetime, .authMaxFailedLogins,
        .authFailedLoginWindow, .authMaxFailedLoginEntries, .limitsEnabled, .limitsElementWritesPerSecond, .limitsElementWritesBurst,
        .limitsMessagesPerSecond, .limitsMessagesBurst, .limitsReactionTogglesPerSecond, .limitsReactionTogglesBurst,
        .limitsRoomCreatesPerSecond, .limitsRoomCreatesBurst, .limitsMembershipChangesPerSecond, .limitsMembershipChangesBurst,
        .limitsMaxTrackedUsers, .authTokenLeeway, .realtimeGlobalEvents, .realtimeLegacyJoinEvents, .realtimePingInterval,
        .realtimePingTimeout, .realtimeMaxPayload, .realtimeMaxOutboundBytesPerSocket, .realtimeCorsAllowedOrigins, .realtimeAllowedOrigins,
        .realtimeEventLogCapacity, .realtimeEventLogMaxBytes, .realtimeFaultMaxBufferedBytes, .realtimeAllowEIO3, .realtimeConnectionStateRecoveryMaxDisconnectionDuration,
        .realtimeConnectionStateRecoveryMaxBufferedPackets, .realtimeConnectionStateRecoveryMaxBufferedBytes, .realtimeGapWait, .realtimeRedisUrl,
        .realtimeRedisChannelPrefix, .realtimeRedisReconnectMinDelay, .realtimeRedisReconnectMaxDelay, .realtimeRedisConnectTimeout,
        .realtimeRedisPingInterval, .realtimeRedisMaxPendingPublishes, .realtimeRedisMaxPendingBytes, .realtimeRedisMaxMessageBytes,
        .realtimeRedisMaxInboundBacklog, .realtimeRedisTransport, .realtimeRedisStreamMaxLength, .realtimeRedisStreamReadCount,
        .realtimeRedisStreamBlock, .inspectorEnabled, .inspectorAdminToken, .metricsAllowFrom, .metricsToken, .inspectorMaxPageSize,
        .inspectorRequestLogCapacity, .inspectorRequestLogMaxBodyBytes, .apnsKeyFile, .apnsKeyId, .apnsTeamId, .apnsTopic, .apnsEnvironment,
        .apnsEndpoint, .apnsCaFile, .apnsMaxRetries, .apnsRetryBase, .apnsRequestTimeout, .apnsTokenRefresh, .logLevel, .logFormat, .demo,
        .testMode,
    ]
}
