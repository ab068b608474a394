import TSHTTP
import TSSockets

/// The HTTP server's settings (`server.*`): listener, limits, deadlines and the event loops.
extension HTTPServerConfiguration {
    /// Reads `server.*` from `reader`; a bad `server.poller` or `server.ioUring` stops the start
    /// with a message naming the setting. The clock and the connection transform (TLS) are the
    /// caller's to set.
    init(reader: AppConfiguration) throws {
        self.init()
        host = reader[.serverHost]
        port = reader[.serverPort]
        let loops = reader[.serverEventLoops]
        if loops > 0 { eventLoops = loops }
        poller = try Self.poller(reader)
        ioUring = try Self.ioUring(reader)  // io_uring sends where the kernel has them
        maxConnections = reader[.serverMaxConnections]
        maxRequestLineBytes = reader[.serverMaxRequestLineBytes]
        maxHeaderBytes = reader[.serverMaxHeaderBytes]
        maxHeaderCount = reader[.serverMaxHeaderCount]
        maxBodyBytes = reader[.serverMaxBodyBytes]
        maxJSONDepth = reader[.serverMaxJsonDepth]
        headerReadTimeout = reader[.serverHeaderReadTimeout].settingNanoseconds
        idleTimeout = reader[.serverIdleTimeout].settingNanoseconds
        shutdownGracePeriod = reader[.serverShutdownGrace].settingNanoseconds
        maxOutboundBytesPerConnection = reader[.serverMaxOutboundBytesPerConnection]
        bodyReadTimeout = Self.bodyReadTimeout(reader).settingNanoseconds
        outboundStallTimeout = max(.seconds(1), reader[.serverOutboundStallTimeout]).settingNanoseconds
        minOutboundBytesPerSecond = max(0, reader[.serverMinOutboundBytesPerSecond])
        maxConnectionsPerAddress = max(0, reader[.serverMaxConnectionsPerAddress])
    }

    /// `server.bodyReadTimeout`, at least a second: it also bounds one WebSocket frame (Engine.IO).
    static func bodyReadTimeout(_ reader: AppConfiguration) -> Duration { max(.seconds(1), reader[.serverBodyReadTimeout]) }

    /// `server.ioUring`, checked: `auto` or `off`.
    static func ioUring(_ reader: AppConfiguration) throws -> IORingMode {
        let value = reader[.serverIoUring]
        guard let mode = IORingMode(rawValue: value.lowercased()) else {
            throw ConfigurationError("server.ioUring (TOUCHSYNC_SERVER_IO_URING) is \"\(value)\"; it must be auto or off")
        }
        return mode
    }

    /// `server.poller`, checked: `auto` or a backend this system has.
    static func poller(_ reader: AppConfiguration) throws -> PollerKind {
        let value = reader[.serverPoller]
        guard let kind = PollerKind(rawValue: value), kind.isAvailable else {
            throw ConfigurationError("server.poller (TOUCHSYNC_SERVER_POLLER) is \"\(value)\"; on this system it must be auto, "
                + Platform.availablePollers.map(\.rawValue).joined(separator: " or "))
        }
        return kind
    }
}
