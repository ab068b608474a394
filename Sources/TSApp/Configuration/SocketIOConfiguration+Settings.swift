import TSEngineIO
import TSHTTP
import TSRoutes
import TSSocketIO

/// The realtime settings (`realtime.*`): Engine.IO's transport, Socket.IO's recovery and
/// back-pressure, and who receives which domain events.
extension EngineIOConfiguration {
    init(reader: AppConfiguration) {
        self.init()
        pingInterval = reader[.realtimePingInterval].settingMilliseconds
        pingTimeout = reader[.realtimePingTimeout].settingMilliseconds
        maxPayload = reader[.realtimeMaxPayload]
        allowedOrigins = reader[.realtimeCorsAllowedOrigins]
        webSocketAllowedOrigins = reader[.realtimeAllowedOrigins]
        frameReadTimeout = HTTPServerConfiguration.bodyReadTimeout(reader)
        allowEIO3 = reader[.realtimeAllowEIO3]
    }
}

extension SocketIOConfiguration {
    init(reader: AppConfiguration) {
        self.init(engine: EngineIOConfiguration(reader: reader))
        recoveryMaxDisconnectionMs = reader[.realtimeConnectionStateRecoveryMaxDisconnectionDuration].settingMilliseconds
        recoveryMaxBufferedPackets = reader[.realtimeConnectionStateRecoveryMaxBufferedPackets]
        recoveryMaxBufferedBytes = reader[.realtimeConnectionStateRecoveryMaxBufferedBytes]
        maxOutboundBytesPerSocket = reader[.realtimeMaxOutboundBytesPerSocket]
        engine.maxBufferedPacketsBytes = maxOutboundBytesPerSocket  // the same backlog bound over polling
    }
}

extension RealtimeConfiguration {
    init(reader: AppConfiguration) throws {
        self.init()
        guard let global = GlobalEvents(rawValue: reader[.realtimeGlobalEvents]) else {
            throw ConfigurationError("realtime.globalEvents must be members or all")
        }
        globalEvents = global
        legacyJoinEvents = reader[.realtimeLegacyJoinEvents]
        let gap = reader[.realtimeGapWait]
        guard gap >= .zero, gap <= .seconds(60) else { throw ConfigurationError("realtime.gapWait must be between 0s and 60s") }
        gapWaitMilliseconds = gap.settingMilliseconds
        // Several nodes: a room's first event may overtake earlier ones still on their way (RoomEventSequencer).
        holdFreshRooms = !(reader[.realtimeRedisUrl] ?? "").isEmpty
    }
}
