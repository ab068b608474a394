import Logging
import TSDomain
import TSRedis
import TSRoutes
import TSSocketIO

extension TouchSyncServer {
    /// The cross-node bridge when `realtime.redisUrl` is set (docs/realtime-cluster.md); nil otherwise,
    /// and then nothing connects anywhere.
    static func makeRedisBridge(configuration: AppConfiguration, local: any DomainEventPublisher, hub: SocketIOServer,
                                logger: Logger) throws -> RedisEventBridge? {
        guard let text = configuration.optionalString("realtime.redisUrl"), !text.isEmpty else { return nil }
        let url: RedisURL
        do { url = try RedisURL(parsing: text) } catch { throw ConfigurationError("\(error)") }
        var redis = RedisConfiguration(url: url)
        redis.reconnectMinDelay = positive(configuration.duration("realtime.redis.reconnectMinDelay"), or: .milliseconds(100))
        redis.reconnectMaxDelay = positive(configuration.duration("realtime.redis.reconnectMaxDelay"), or: .seconds(5))
        redis.connectTimeout = positive(configuration.duration("realtime.redis.connectTimeout"), or: .seconds(5))
        redis.pingInterval = positive(configuration.duration("realtime.redis.pingInterval"), or: .seconds(5))
        redis.maxPendingPublishes = max(1, configuration.int("realtime.redis.maxPendingPublishes"))
        redis.maxPendingBytes = max(1024, configuration.int("realtime.redis.maxPendingBytes"))
        redis.maxMessageBytes = max(1024, configuration.int("realtime.redis.maxMessageBytes"))
        let prefix = configuration.string("realtime.redis.channelPrefix")
        return try RedisEventBridge(configuration: redis, channelPrefix: prefix.isEmpty ? "touchsync" : prefix,
                                    maxInboundBacklog: max(1, configuration.int("realtime.redis.maxInboundBacklog")),
                                    local: local, hub: hub, logger: Logger(label: "touchsync.redis"))
    }

    /// The bridge's `/metrics` families (nil when off: the page is as before).
    static func redisMetrics(_ bridge: RedisEventBridge?) -> (@Sendable (inout PrometheusText) -> Void)? {
        guard let bridge else { return nil }
        return { out in bridge.render(into: &out) }
    }

    private static func positive(_ d: Duration, or fallback: Duration) -> Duration { d > .zero ? d : fallback }
}
