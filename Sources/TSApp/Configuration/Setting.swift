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

    /// `TOUCHSYNC_` + the path in SCREAMING_SNAKE_CASE: `realtime.globalEvents` → `TOUCHSYNC_REALTIME_GLOBAL_EVENTS`.
    /// A run of capitals is one word, as people write it: `realtime.allowEIO3` → `TOUCHSYNC_REALTIME_ALLOW_EIO3`.
    public var environmentName: String {
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

    public static let all: [Setting] = [
        Setting(path: "server.host", kind: .string, defaultValue: "127.0.0.1", help: "Address to listen on (0.0.0.0 for all interfaces)."),
        Setting(path: "server.port", kind: .int, defaultValue: 3000, help: "TCP port; 0 picks a free port and prints it."),
        Setting(path: "server.eventLoops", kind: .int, defaultValue: 0, help: "Event-loop threads; 0 = one per core."),
        Setting(path: "server.poller", kind: .string, defaultValue: "auto",
                help: "Readiness backend of the event loops: auto (epoll on Linux, kqueue on macOS), epoll, kqueue or poll (portable poll(2))."),
        // io_uring sends
        Setting(path: "server.ioUring", kind: .string, defaultValue: "auto",
                help: "Whether an event loop sends the output of several connections flushed at once (a broadcast) through io_uring, one submission per 256 sends: auto (Linux, when the kernel allows it; else one log line and send(2)) or off (one send(2) per connection). Ignored on macOS."),
        Setting(path: "server.maxConnections", kind: .int, defaultValue: 10_000, help: "Open connections at most; past it a new one gets 503 and is closed."),
        Setting(path: "server.maxRequestLineBytes", kind: .int, defaultValue: 8192, help: "Longest request line (414 past it)."),
        Setting(path: "server.maxHeaderBytes", kind: .int, defaultValue: 16_384, help: "Largest header block (431 past it)."),
        Setting(path: "server.maxHeaderCount", kind: .int, defaultValue: 100, help: "Most header fields (431 past it)."),
        Setting(path: "server.maxBodyBytes", kind: .int, defaultValue: 1_048_576, help: "Largest request body (413 past it)."),
        Setting(path: "server.headerReadTimeoutSeconds", kind: .int, defaultValue: 10, help: "Time to receive a request head before the connection is closed."),
        Setting(path: "server.idleTimeoutSeconds", kind: .int, defaultValue: 60, help: "Idle keep-alive time before the connection is closed."),
        Setting(path: "server.shutdownGraceSeconds", kind: .int, defaultValue: 10, help: "On SIGTERM/SIGINT, how long in-flight requests may finish."),
        // hostile input: JSON request bodies
        Setting(path: "server.maxJsonDepth", kind: .int, defaultValue: 64, help: "Deepest nesting of arrays/objects in a JSON request body (400 past it)."),
        Setting(path: "server.maxOutboundBytesPerConnection", kind: .int, defaultValue: 4_194_304,
                help: "Unsent bytes an HTTP connection may queue behind the response being sent (one response of any size is exempt) before it is dropped as a slow consumer."),
        // transport: total deadlines and the per-address cap.
        Setting(path: "server.bodyReadTimeoutSeconds", kind: .int, defaultValue: 30,
                help: "Total time to receive a request body after its head, and one WebSocket frame from its first byte (trickled bytes do not extend it); past it 408 (WebSocket: close 1008) and the connection closes."),
        Setting(path: "server.outboundStallTimeoutSeconds", kind: .int, defaultValue: 30,
                help: "With response or socket bytes pending, the longest a client may read none of them before it is dropped as a slow consumer."),
        Setting(path: "server.minOutboundBytesPerSecond", kind: .int, defaultValue: 16_384,
                help: "Slowest overall rate a client must read pending bytes at: they must be gone within server.outboundStallTimeoutSeconds + bytes/rate, a total deadline (0 turns it off)."),
        Setting(path: "server.maxConnectionsPerAddress", kind: .int, defaultValue: 256,
                help: "Open connections from one client IP address; past it a new one from that address gets 503 and is closed while other addresses are still served (0 turns the cap off)."),
        Setting(path: "server.trustedProxies", kind: .stringList, defaultValue: [],
                help: "Reverse proxies (IPs or IPv4 networks a.b.c.d/n) whose X-Forwarded-For names the client: the login throttle then counts the real client, not the proxy. Anyone else's X-Forwarded-For is ignored."),
        // TLS: HTTPS/WSS on the listener.
        Setting(path: "tls.certificateFile", kind: .optionalString, defaultValue: nil,
                help: "PEM certificate chain (leaf first) for HTTPS on the listener (serve --tls-cert); with tls.privateKeyFile set the server speaks only HTTPS/WSS. Reloaded on SIGHUP or when the file changes (docs/tls.md). Linux builds only."),
        Setting(path: "tls.privateKeyFile", kind: .optionalString, defaultValue: nil,
                help: "Unencrypted PEM private key of tls.certificateFile (serve --tls-key)."),
        Setting(path: "tls.handshakeTimeoutSeconds", kind: .int, defaultValue: 10,
                help: "Total time from accept to a finished TLS handshake (a trickled ClientHello does not extend it); past it the connection is closed with a log line."),
        Setting(path: "tls.maxConcurrentHandshakes", kind: .int, defaultValue: 1024,
                help: "TLS handshakes past their first ClientHello byte in progress at once across the server (each holds a TLS session and its buffers, about 48 KiB, and costs a private-key operation: 1024 is about 48 MiB); past it such a connection is closed with a log line. Silent connections are bounded per address by tls.maxHandshakesPerAddress (0 turns the bound off)."),
        // tls: a silent connection must not hold a handshake slot others need.
        Setting(path: "tls.maxHandshakesPerAddress", kind: .int, defaultValue: 32,
                help: "TLS handshakes in progress at once from one client IP address, silent connections (no ClientHello yet) included; past it a new connection from that address is closed at once with a log line while other addresses are served (0 turns the bound off)."),
        Setting(path: "tls.reloadCheckSeconds", kind: .int, defaultValue: 60,
                help: "How often the certificate and key files are checked for a change (then reloaded for new connections; SIGHUP reloads at once); 0 turns the check off."),
        Setting(path: "tls.redirectPort", kind: .int, defaultValue: 0,
                help: "With HTTPS on, a second plain-HTTP port on server.host that answers 308 to the same URL on https:// (GET /health is served as is); 0 = none."),
        Setting(path: "database.path", kind: .string, defaultValue: "./data/touchsync.sqlite", help: "SQLite file, or :memory:."),
        Setting(path: "database.synchronous", kind: .string, defaultValue: "FULL", help: "SQLite synchronous mode in WAL: FULL (fsync each group commit) or NORMAL."),
        Setting(path: "database.busyTimeoutMs", kind: .int, defaultValue: 5000, help: "SQLite busy timeout."),
        Setting(path: "database.readers", kind: .int, defaultValue: 2, help: "Read-only connections in the pool."),
        Setting(path: "database.maxWriteBatch", kind: .int, defaultValue: 64, help: "Most write jobs committed in one group commit."),
        Setting(path: "database.migrationsDir", kind: .optionalString, defaultValue: nil, help: "Directory of NNNN_*.sql migrations to use instead of the ones built into the binary (null: the built-in ones); PostgreSQL's are in its postgres/ subdirectory."),
        // PostgreSQL as the shared storage of several nodes (docs/storage-postgres.md).
        Setting(path: "database.url", kind: .optionalString, defaultValue: nil,
                help: "postgres://user:pass@host:port/db selects PostgreSQL instead of the SQLite file database.path (serve --database-url). Linux builds only."),
        Setting(path: "database.connectTimeout", kind: .duration, defaultValue: "5s",
                help: "PostgreSQL: the longest one connection attempt may take (libpq connect_timeout, whole seconds, at least 1s)."),
        Setting(path: "database.statementTimeout", kind: .duration, defaultValue: "30s",
                help: "PostgreSQL: statement_timeout of every session; a statement running longer is cancelled by the server (0s = no limit)."),
        Setting(path: "database.reconnectInitialBackoff", kind: .duration, defaultValue: "250ms",
                help: "PostgreSQL: wait before the first reconnection attempt after the database became unreachable; doubles after each failed attempt."),
        Setting(path: "database.reconnectMaxBackoff", kind: .duration, defaultValue: "10s",
                help: "PostgreSQL: the longest wait between two reconnection attempts (while unreachable, requests get 503 UNAVAILABLE at once)."),
        Setting(path: "database.startupWait", kind: .duration, defaultValue: "30s",
                help: "PostgreSQL: how long start-up keeps retrying an unreachable database before giving up (0s = one attempt)."),
        Setting(path: "database.maxWriteRetries", kind: .int, defaultValue: 3,
                help: "PostgreSQL: re-runs of a write lost to a serialization failure, a deadlock or a lost connection (each job alone) before its error is returned."),
        // storage: the read queue, the WAL bound, notification pruning.
        Setting(path: "database.maxQueuedReads", kind: .int, defaultValue: 1024,
                help: "Reads waiting for a free reader connection at most; past it a request gets 503 UNAVAILABLE with Retry-After."),
        Setting(path: "database.journalSizeLimitBytes", kind: .int, defaultValue: 67_108_864,
                help: "SQLite journal_size_limit: the WAL file is cut back to at most this many bytes after a checkpoint (-1 = no limit)."),
        Setting(path: "database.walAutocheckpointPages", kind: .int, defaultValue: 10_000,
                help: "SQLite wal_autocheckpoint: a checkpoint runs after a commit that leaves the WAL this many pages long (0 = off)."),
        Setting(path: "database.checkpointInterval", kind: .duration, defaultValue: "60s",
                help: "Time between background wal_checkpoint(TRUNCATE)s, which never wait for readers (0s = off)."),
        // toggle: the write path's I/O per commit.
        Setting(path: "database.mmapSizeBytes", kind: .int, defaultValue: 268_435_456,
                help: "SQLite mmap_size of every connection: database pages are read through a memory map of at most this many bytes instead of one pread each (0 = off)."),
        Setting(path: "database.writerCacheBytes", kind: .int, defaultValue: 33_554_432,
                help: "SQLite cache_size of the writer connection in bytes: the pages group commits touch stay cached instead of being read back from the WAL."),
        Setting(path: "notifications.retention", kind: .duration, defaultValue: "30d",
                help: "Delivered notifications older than this are deleted in the background (0s = keep forever); undelivered ones are kept."),
        Setting(path: "notifications.maxPerUser", kind: .int, defaultValue: 1000,
                help: "Newest notifications kept per user's feed (and per room's feed of new elements); older delivered ones are deleted (0 = no cap)."),
        Setting(path: "notifications.pruneInterval", kind: .duration, defaultValue: "5m",
                help: "Time between background pruning rounds of notifications (0s = off)."),
        Setting(path: "notifications.pruneBatchSize", kind: .int, defaultValue: 500,
                help: "Rows deleted per write while pruning, so the writer is never held long."),
        // Backups while serving (docs/backup.md): SQLite only; PostgreSQL uses pg_dump.
        Setting(path: "backup.directory", kind: .optionalString, defaultValue: nil,
                help: "Directory for scheduled backups of the SQLite database (touchsync-YYYYMMDDTHHMMSS.mmmZ.sqlite, each checked with integrity_check); null turns them off."),
        Setting(path: "backup.interval", kind: .duration, defaultValue: "6h",
                help: "Time between scheduled backups; the first is due an interval after the newest backup already in backup.directory (at start when there is none)."),
        Setting(path: "backup.keep", kind: .int, defaultValue: 7,
                help: "Newest scheduled backups kept in backup.directory; older ones are deleted after each backup (0 = keep all)."),
        Setting(path: "auth.jwtSecret", kind: .optionalString, defaultValue: nil,
                help: "HS256 secret. When null a random one is generated and stored beside the database (refused with TOUCHSYNC_ENV=production)."),
        Setting(path: "auth.passwordIterations", kind: .int, defaultValue: 210_000, help: "PBKDF2-HMAC-SHA256 iterations for password hashes."),
        Setting(path: "auth.tokenLifetimeSeconds", kind: .int, defaultValue: 2_592_000, help: "Lifetime of tokens from register/login (30 days)."),
        Setting(path: "auth.maxFailedLogins", kind: .int, defaultValue: 10,
                help: "Failed logins per (username, client address), or per address for unknown usernames, within the window before 429 RATE_LIMITED (0 turns it off)."),
        Setting(path: "auth.failedLoginWindowSeconds", kind: .int, defaultValue: 300, help: "The window of auth.maxFailedLogins."),
        // hostile input: bound of the failed-login table
        Setting(path: "auth.maxFailedLoginEntries", kind: .int, defaultValue: 50_000,
                help: "Entries the failed-login throttle tracks at most; when full, expired and then the oldest entries are dropped."),
        // limits: per-user write limits (docs/limits.md).
        Setting(path: "limits.enabled", kind: .bool, defaultValue: true,
                help: "Per-user write limits (limits.*PerSecond / limits.*Burst): past them a write gets 429 RATE_LIMITED with Retry-After (Socket.IO: an ack error RATE_LIMITED). false turns every one off (benchmarks)."),
        Setting(path: "limits.elementWritesPerSecond", kind: .int, defaultValue: 60,
                help: "Element creates, updates and deletes (and room clears) per user per second, on average (0 = no limit). Dragging an element sends an update per frame."),
        Setting(path: "limits.elementWritesBurst", kind: .int, defaultValue: 300, help: "Element writes one user may make in a row before limits.elementWritesPerSecond applies."),
        Setting(path: "limits.messagesPerSecond", kind: .int, defaultValue: 10, help: "Chat messages per user per second, on average (0 = no limit)."),
        Setting(path: "limits.messagesBurst", kind: .int, defaultValue: 30, help: "Messages one user may send in a row."),
        Setting(path: "limits.reactionTogglesPerSecond", kind: .int, defaultValue: 20, help: "Reaction toggles per user per second, on average (0 = no limit)."),
        Setting(path: "limits.reactionTogglesBurst", kind: .int, defaultValue: 60, help: "Reaction toggles one user may make in a row."),
        Setting(path: "limits.roomCreatesPerSecond", kind: .int, defaultValue: 2, help: "Rooms one user may create per second, on average (0 = no limit)."),
        Setting(path: "limits.roomCreatesBurst", kind: .int, defaultValue: 20, help: "Rooms one user may create in a row."),
        Setting(path: "limits.membershipChangesPerSecond", kind: .int, defaultValue: 10,
                help: "Membership changes (add a member, leave, rename a room) per user per second, on average (0 = no limit)."),
        Setting(path: "limits.membershipChangesBurst", kind: .int, defaultValue: 30, help: "Membership changes one user may make in a row."),
        Setting(path: "limits.maxTrackedUsers", kind: .int, defaultValue: 100_000,
                help: "(user, kind of write) budgets tracked at most; when full, the ones refilled completely are dropped first (they hold no information), then the half closest to full."),
        Setting(path: "auth.tokenLeewaySeconds", kind: .int, defaultValue: 60,
                help: "Clock-skew leeway for a bearer token's exp, nbf and iat (RFC 7519 §4.1.4-§4.1.6)."),
        Setting(path: "realtime.globalEvents", kind: .string, defaultValue: "members", help: "Who gets *:global events: members (of the room) or all (every socket)."),
        Setting(path: "realtime.legacyJoinEvents", kind: .bool, defaultValue: false, help: "Also send one element:created per element on room:join (old clients)."),
        Setting(path: "realtime.pingIntervalMs", kind: .int, defaultValue: 25_000, help: "Engine.IO pingInterval."),
        Setting(path: "realtime.pingTimeoutMs", kind: .int, defaultValue: 20_000, help: "Engine.IO pingTimeout."),
        Setting(path: "realtime.maxPayload", kind: .int, defaultValue: 1_000_000, help: "Engine.IO maxPayload (bytes per polling request / message)."),
        Setting(path: "realtime.maxOutboundBytesPerSocket", kind: .int, defaultValue: 1_048_576, help: "Unsent bytes a socket may queue behind the message being sent (one message of any size, e.g. a room's elements:batch, is exempt); past it the slow consumer is disconnected."),
        Setting(path: "realtime.corsAllowedOrigins", kind: .stringList, defaultValue: ["*"], help: "Origins allowed on polling requests (CORS); [\"*\"] allows any."),
        Setting(path: "realtime.allowedOrigins", kind: .optionalStringList, defaultValue: nil, help: "Origins allowed to open a WebSocket; null allows any."),
        Setting(path: "realtime.eventLogCapacity", kind: .int, defaultValue: 10_000,
                help: "Emitted realtime events kept in memory for GET /api/test/events (test mode) and the inspector; older ones are evicted."),
        Setting(path: "realtime.eventLogMaxBytes", kind: .int, defaultValue: 16_777_216,
                help: "Approximate payload bytes the event log keeps at most (oldest evicted; one payload over a quarter of it is stored truncated)."),
        // Socket.IO compatibility: EIO3 and connection state recovery.
        Setting(path: "realtime.allowEIO3", kind: .bool, defaultValue: false,
                help: "Also accept Engine.IO v3 / Socket.IO v4 protocol clients (EIO=3: socket.io 2.x, Socket.IO-Client-Swift 15 and earlier, python-socketio 4.x); off as in the reference server."),
        Setting(path: "realtime.connectionStateRecovery.maxDisconnectionDuration", kind: .int, defaultValue: 0,
                help: "Connection state recovery (socket.io 4.6+): ms a disconnected socket's id, rooms and missed room events are kept for it to reconnect with; 0 turns recovery off."),
        Setting(path: "realtime.connectionStateRecovery.maxBufferedPackets", kind: .int, defaultValue: 10_000,
                help: "Room events kept for recovery (oldest dropped first); a client that missed more than this gets a fresh session."),
        Setting(path: "realtime.connectionStateRecovery.maxBufferedBytes", kind: .int, defaultValue: 16_777_216,
                help: "Encoded bytes of the events kept for recovery at most (oldest dropped first)."),
        // Redis: cross-node fan-out over Redis pub/sub (docs/realtime-cluster.md).
        Setting(path: "realtime.redisUrl", kind: .optionalString, defaultValue: nil,
                help: "redis://[[user]:password@]host[:port] of the Redis server the nodes of a cluster share for cross-node fan-out (serve --redis-url, TOUCHSYNC_REDIS_URL); null = one node alone: no connection is attempted."),
        Setting(path: "realtime.redis.channelPrefix", kind: .string, defaultValue: "touchsync",
                help: "Prefix of the pub/sub channel the nodes exchange domain events on (<prefix>:events); nodes of one cluster must agree."),
        Setting(path: "realtime.redis.reconnectMinDelay", kind: .duration, defaultValue: "100ms",
                help: "Delay before the first reconnect to a lost or unreachable Redis; each failed attempt doubles it."),
        Setting(path: "realtime.redis.reconnectMaxDelay", kind: .duration, defaultValue: "5s",
                help: "Longest delay between reconnect attempts."),
        Setting(path: "realtime.redis.connectTimeout", kind: .duration, defaultValue: "5s",
                help: "Total time from connect to a ready Redis connection (AUTH and SUBSCRIBE answered); past it the attempt fails."),
        Setting(path: "realtime.redis.pingInterval", kind: .duration, defaultValue: "5s",
                help: "A PING on each Redis connection this often; nothing heard back by the next one and the connection is closed and re-opened."),
        Setting(path: "realtime.redis.maxPendingPublishes", kind: .int, defaultValue: 10_000,
                help: "Events waiting to be published (queued while Redis is down, or sent and unanswered) at most; past it an event is not published to other nodes and is counted in /metrics (touchsync_redis_publishes_total{outcome=\"dropped\"})."),
        Setting(path: "realtime.redis.maxPendingBytes", kind: .int, defaultValue: 16_777_216,
                help: "Bytes of those waiting events at most (same drop and count past it)."),
        Setting(path: "realtime.redis.maxMessageBytes", kind: .int, defaultValue: 16_777_216,
                help: "Largest encoded event published or received; a larger one is not published (counted as dropped), a larger one received closes and re-opens the subscriber connection."),
        Setting(path: "realtime.redis.maxInboundBacklog", kind: .int, defaultValue: 10_000,
                help: "Events from other nodes waiting for this node's broadcaster at most; past it one is dropped and counted (touchsync_redis_received_total{outcome=\"dropped\"})."),
        Setting(path: "inspector.enabled", kind: .bool, defaultValue: true,
                help: "Serve the live inspector at /inspector (serve --no-inspector turns it off: 404). With TOUCHSYNC_ENV=production it is served only when inspector.adminToken is set."),
        Setting(path: "inspector.adminToken", kind: .optionalString, defaultValue: nil,
                help: "When set, /inspector and /inspector/api/* require it (Authorization: Bearer <token>, or ?token=<token> on the page) and answer it from any address. Unset: only requests from this machine (TCP peer on loopback, not forwarded for another client) are answered, others get 403. Needed for the inspector with TOUCHSYNC_ENV=production."),
        // metrics: who may scrape /metrics besides this machine.
        Setting(path: "metrics.allowFrom", kind: .stringList, defaultValue: [],
                help: "Addresses or CIDR ranges (IPv4 and IPv6, e.g. 10.0.0.0/8, 2001:db8::/32) whose TCP peer may read /metrics; loopback always may. Others get 403 unless they send metrics.token."),
        Setting(path: "metrics.token", kind: .optionalString, defaultValue: nil,
                help: "When set, /metrics also answers requests with Authorization: Bearer <token> from any address (a wrong token is 401)."),
        // inspector: the inspector's data browser and request list.
        Setting(path: "inspector.maxPageSize", kind: .int, defaultValue: 200,
                help: "Most rows one page of the inspector's data browser returns (a larger ?limit= is cut to it)."),
        Setting(path: "inspector.requestLogCapacity", kind: .int, defaultValue: 100,
                help: "Request/response pairs the inspector's request list keeps (oldest evicted); 0 turns it off. Never on with TOUCHSYNC_ENV=production."),
        Setting(path: "inspector.requestLogMaxBodyBytes", kind: .int, defaultValue: 16384,
                help: "Bytes of each request and response body the request list keeps (the rest is cut when recorded)."),
        // APNs push delivery, off unless apns.keyFile is set (docs/apns.md).
        Setting(path: "apns.keyFile", kind: .optionalString, defaultValue: nil,
                help: "Path of the .p8 signing key from Apple; setting it turns APNs delivery on (otherwise notifications are only logged)."),
        Setting(path: "apns.keyId", kind: .optionalString, defaultValue: nil, help: "The key's id (10 characters, from the developer account)."),
        Setting(path: "apns.teamId", kind: .optionalString, defaultValue: nil, help: "The developer team id (the provider token's iss)."),
        Setting(path: "apns.topic", kind: .optionalString, defaultValue: nil, help: "The app's bundle id (the apns-topic header)."),
        Setting(path: "apns.environment", kind: .string, defaultValue: "sandbox",
                help: "sandbox (development builds: api.sandbox.push.apple.com) or production (api.push.apple.com)."),
        Setting(path: "apns.endpoint", kind: .optionalString, defaultValue: nil,
                help: "Overrides the host chosen by apns.environment; http:// (HTTP/2 without TLS) only for a local test server."),
        Setting(path: "apns.caFile", kind: .optionalString, defaultValue: nil,
                help: "A CA bundle (PEM) to verify the APNs host with instead of the system's (a local TLS test server, a TLS-inspecting proxy)."),
        Setting(path: "apns.maxRetries", kind: .int, defaultValue: 3, help: "Retries of a request answered 429 or 5xx (or not answered), with exponential backoff."),
        Setting(path: "apns.retryBaseMs", kind: .int, defaultValue: 500, help: "The first retry's delay; each next one doubles it."),
        Setting(path: "apns.requestTimeoutMs", kind: .int, defaultValue: 10000, help: "Total time of one APNs request, connection included."),
        Setting(path: "apns.tokenRefreshSeconds", kind: .int, defaultValue: 3000,
                help: "Age at which the provider token (ES256 JWT) is signed anew; APNs refuses tokens older than an hour."),
        Setting(path: "log.level", kind: .string, defaultValue: "info", help: "trace, debug, info, notice, warning, error or critical."),
        Setting(path: "log.format", kind: .string, defaultValue: "text", help: "text (one line per event) or json."),
        Setting(path: "demo", kind: .bool, defaultValue: false, help: "Seed demo users, rooms, elements, messages and posts on start (if the database is empty)."),
        Setting(path: "testMode", kind: .bool, defaultValue: false,
                help: "Test-target mode: unauthenticated /api/test/reset, /api/test/fixtures and /api/test/events (docs/test-mode.md). Refused with TOUCHSYNC_ENV=production."),
    ]

    public static func named(_ path: String) -> Setting? { all.first { $0.path == path } }
}
