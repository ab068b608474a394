import TSRealtime
import TSRedis

/// Cross-node fan-out over Redis (`realtime.redisUrl`, `realtime.redis.*`, docs/realtime-cluster.md).
extension SettingKeys {
    // Redis: cross-node fan-out over a Redis stream or pub/sub (docs/realtime-cluster.md).
    public static let realtimeRedisUrl = SettingKey<String?>("realtime.redisUrl", nil, help: "redis://[[user]:password@]host[:port] of the Redis server the nodes of a cluster share for cross-node fan-out (serve --redis-url, TOUCHSYNC_REDIS_URL); null = one node alone: no connection is attempted.")
    public static let realtimeRedisChannelPrefix = SettingKey<String>("realtime.redis.channelPrefix", "touchsync", help: "Prefix of the stream key (or pub/sub channel) the nodes exchange domain events on (<prefix>:events); nodes of one cluster must agree.")
    public static let realtimeRedisReconnectMinDelay = SettingKey<Duration>("realtime.redis.reconnectMinDelay", "100ms", help: "Delay before the first reconnect to a lost or unreachable Redis; each failed attempt doubles it.")
    public static let realtimeRedisReconnectMaxDelay = SettingKey<Duration>("realtime.redis.reconnectMaxDelay", "5s", help: "Longest delay between reconnect attempts.")
    public static let realtimeRedisConnectTimeout = SettingKey<Duration>("realtime.redis.connectTimeout", "5s", help: "Total time from connect to a ready Redis connection (AUTH and SUBSCRIBE answered); past it the attempt fails.")
    public static let realtimeRedisPingInterval = SettingKey<Duration>("realtime.redis.pingInterval", "5s", help: "A PING on each Redis connection this often; nothing heard back by the next one and the connection is closed and re-opened.")
    public static let realtimeRedisMaxPendingPublishes = SettingKey<Int>("realtime.redis.maxPendingPublishes", 10_000, help: "Events waiting to be published (queued while Redis is down, or sent and unanswered) at most; past it an event is not published to other nodes and is counted in /metrics (touchsync_redis_publishes_total{outcome=\"dropped\"}).")
    public static let realtimeRedisMaxPendingBytes = SettingKey<Int>("realtime.redis.maxPendingBytes", 16_777_216, help: "Bytes of those waiting events at most (same drop and count past it).")
    public static let realtimeRedisMaxMessageBytes = SettingKey<Int>("realtime.redis.maxMessageBytes", 16_777_216, help: "Largest encoded event published or received; a larger one is not published (counted as dropped), a larger one received closes and re-opens the subscriber connection.")
    public static let realtimeRedisMaxInboundBacklog = SettingKey<Int>("realtime.redis.maxInboundBacklog", 10_000, help: "Events from other nodes waiting for this node's broadcaster at most; past it one is dropped and counted (touchsync_redis_received_total{outcome=\"dropped\"}).")
    public static let realtimeRedisTransport = SettingKey<String>("realtime.redis.transport", "stream", help: "How events travel between nodes: stream (a Redis stream <prefix>:events that each node reads from its last position: a node that lost Redis, or a Redis restarted with its data, catches up in order) or pubsub (nothing kept: what is published while a node is disconnected is lost to it).")
    public static let realtimeRedisStreamMaxLength = SettingKey<Int>("realtime.redis.streamMaxLength", 100_000, help: "Entries the stream keeps, about (XADD MAXLEN ~): a node that falls further behind misses the oldest and counts them (touchsync_redis_missed_total).")
    public static let realtimeRedisStreamReadCount = SettingKey<Int>("realtime.redis.streamReadCount", 100, help: "Entries one XREAD asks for at most.")
    public static let realtimeRedisStreamBlock = SettingKey<Duration>("realtime.redis.streamBlock", "1s", help: "How long one XREAD waits for new entries before it is sent again (kept under half of realtime.redis.pingInterval).")

    /// The `realtime.redisUrl` and `realtime.redis.*` keys, in documentation order.
    static let redisKeys: [SettingKeys] = [
        .realtimeRedisUrl, .realtimeRedisChannelPrefix, .realtimeRedisReconnectMinDelay, .realtimeRedisReconnectMaxDelay,
        .realtimeRedisConnectTimeout, .realtimeRedisPingInterval, .realtimeRedisMaxPendingPublishes,
        .realtimeRedisMaxPendingBytes, .realtimeRedisMaxMessageBytes, .realtimeRedisMaxInboundBacklog, .realtimeRedisTransport,
        .realtimeRedisStreamMaxLength, .realtimeRedisStreamReadCount, .realtimeRedisStreamBlock,
    ]
}

extension RedisEventBridge {
    /// What the bridge is built from: the connection settings, the stream key's prefix, the
    /// transport, and the inbound bound.
    struct Settings: Sendable {
        var redis: RedisConfiguration
        var channelPrefix: String
        var transport: Transport
        var maxInboundBacklog: Int

        /// nil when `realtime.redisUrl` is unset (one node alone: nothing connects anywhere); a bad
        /// URL or transport stops the start with a message naming the setting. A duration of 0
        /// falls back to its default.
        init?(reader: AppConfiguration) throws {
            guard let text = reader[.realtimeRedisUrl], !text.isEmpty else { return nil }
            let url: RedisURL
            do { url = try RedisURL(parsing: text) } catch { throw ConfigurationError("\(error)") }
            redis = RedisConfiguration(url: url)
            redis.reconnectMinDelay = Self.positive(reader[.realtimeRedisReconnectMinDelay], or: .milliseconds(100))
            redis.reconnectMaxDelay = Self.positive(reader[.realtimeRedisReconnectMaxDelay], or: .seconds(5))
            redis.connectTimeout = Self.positive(reader[.realtimeRedisConnectTimeout], or: .seconds(5))
            redis.pingInterval = Self.positive(reader[.realtimeRedisPingInterval], or: .seconds(5))
            redis.maxPendingPublishes = max(1, reader[.realtimeRedisMaxPendingPublishes])
            redis.maxPendingBytes = max(1024, reader[.realtimeRedisMaxPendingBytes])
            redis.maxMessageBytes = max(1024, reader[.realtimeRedisMaxMessageBytes])
            let prefix = reader[.realtimeRedisChannelPrefix]
            channelPrefix = prefix.isEmpty ? "touchsync" : prefix
            switch reader[.realtimeRedisTransport] {
            case "stream":
                transport = .stream(maxLength: max(1, reader[.realtimeRedisStreamMaxLength]),
                                    readCount: min(10_000, max(1, reader[.realtimeRedisStreamReadCount])),
                                    block: Self.positive(reader[.realtimeRedisStreamBlock], or: .seconds(1)))
            case "pubsub":
                transport = .pubsub
            case let other:
                throw ConfigurationError("realtime.redis.transport \"\(other)\": expected stream or pubsub")
            }
            maxInboundBacklog = max(1, reader[.realtimeRedisMaxInboundBacklog])
        }

        private static func positive(_ d: Duration, or fallback: Duration) -> Duration { d > .zero ? d : fallback }
    }
}
