import Logging
import TSDomain
import TSRedis
import TSRoutes
import TSSocketIO

extension TouchSyncServer {
    /// The cross-node bridge when `realtime.redisUrl` is set (docs/realtime-cluster.md); nil otherwise,
    /// and then nothing connects anywhere.
    static func makeRedisBridge(settings: RedisEventBridge.Settings?, local: any DomainEventPublisher, hub: SocketIOServer) throws -> RedisEventBridge? {
        guard let settings else { return nil }
        return try RedisEventBridge(configuration: settings.redis, channelPrefix: settings.channelPrefix, transport: settings.transport,
                                    maxInboundBacklog: settings.maxInboundBacklog, local: local, hub: hub, logger: Logger(label: "touchsync.redis"))
    }

    /// The bridge's `/metrics` families (nil when off: the page is as before).
    static func redisMetrics(_ bridge: RedisEventBridge?) -> (@Sendable (inout PrometheusText) -> Void)? {
        guard let bridge else { return nil }
        return { out in bridge.render(into: &out) }
    }
}
