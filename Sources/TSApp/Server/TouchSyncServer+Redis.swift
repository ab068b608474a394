import Logging
import TSContract
import TSDomain
import TSRealtime
import TSRedis
import TSRoutes
import TSSocketIO

extension TouchSyncServer {
    /// The cross-node bridge when `realtime.redisUrl` is set (docs/realtime-cluster.md); nil otherwise,
    /// and then nothing connects anywhere.
    /// With connection state recovery on, sessions are also kept in Redis, for another node to
    /// restore (`RedisSessionMirror`).
    static func makeRedisBridge(settings: RedisEventBridge.Settings?, local: RealtimeBroadcaster, recovery: ClusterRecovery?,
                                hub: SocketIOServer) throws -> RedisEventBridge? {
        guard let settings else { return nil }
        let mirror = try recovery.map { recovery in
            try RedisSessionMirror(configuration: settings.redis, prefix: settings.channelPrefix, hub: hub, broadcaster: local,
                                   recovery: recovery, logger: Logger(label: "touchsync.recovery"))
        }
        return try RedisEventBridge(configuration: settings.redis, channelPrefix: settings.channelPrefix, transport: settings.transport,
                                    maxInboundBacklog: settings.maxInboundBacklog, local: local, hub: hub, sessionMirror: mirror,
                                    logger: Logger(label: "touchsync.redis"))
    }

    /// The broadcaster's part of recovery across nodes: with several nodes (Redis) and connection
    /// state recovery on; nil otherwise.
    static func makeClusterRecovery(settings: RedisEventBridge.Settings?, hub: SocketIOServer, wallClock: any WallClock) -> ClusterRecovery? {
        guard settings != nil, hub.configuration.recoveryMaxDisconnection > .zero else { return nil }
        return ClusterRecovery(maxEvents: hub.configuration.recoveryMaxBufferedPackets, window: hub.configuration.recoveryMaxDisconnection,
                               clock: wallClock)
    }

    /// The bridge's `/metrics` families, and the cross-node order's (nil when off: the page is as before).
    static func redisMetrics(_ bridge: RedisEventBridge?, broadcaster: RealtimeBroadcaster) -> (@Sendable (inout PrometheusText) -> Void)? {
        guard let bridge else { return nil }
        return { out in
            bridge.render(into: &out)
            let c = broadcaster.orderCounters
            out.single("touchsync_realtime_events_skipped_total", type: "counter",
                       help: "Room event numbers given up after realtime.gapWait: events lost between the node that committed them and this one (docs/realtime-cluster.md, \"Order across nodes\").",
                       Double(c.skipped))
            out.single("touchsync_realtime_events_late_total", type: "counter",
                       help: "Events that arrived after their number had been given up (a delay between nodes longer than realtime.gapWait): delivered late, out of their room's order.",
                       Double(c.late))
            out.single("touchsync_realtime_joins_late_total", type: "counter",
                       help: "room:join reads handed on after a later-numbered event of the room had already left (its socket may miss events until it joins again).",
                       Double(c.joinsLate))
            out.single("touchsync_realtime_rooms_tracked", type: "gauge",
                       help: "Rooms whose next event number this node remembers (realtime order; idle rooms are forgotten after a while).", Double(c.roomsTracked))
            bridge.sessionMirror?.render(into: &out)
        }
    }
}
