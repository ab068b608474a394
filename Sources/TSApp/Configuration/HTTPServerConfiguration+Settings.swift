import TSHTTP
import TSRoutes
import TSSockets

/// The HTTP server's settings (`server.*`): listener, limits, deadlines and the event loops.
extension SettingKeys {
    public static let serverHost = SettingKey<String>("server.host", "127.0.0.1", help: "Address to listen on (0.0.0.0 for all interfaces).")
    public static let serverPort = SettingKey<Int>("server.port", 3000, help: "TCP port; 0 picks a free port and prints it.")
    public static let serverEventLoops = SettingKey<Int>("server.eventLoops", 0, help: "Event-loop threads; 0 = one per core.")
    public static let serverPoller = SettingKey<String>("server.poller", "auto", help: "Readiness backend of the event loops: auto (epoll on Linux, kqueue on macOS), epoll, kqueue or poll (portable poll(2)).")
    // io_uring sends
    public static let serverIoUring = SettingKey<String>("server.ioUring", "auto", help: "Whether an event loop sends the output of several connections flushed at once (a broadcast) through io_uring, one submission per 256 sends: auto (Linux, when the kernel allows it; else one log line and send(2)) or off (one send(2) per connection). Ignored on macOS.")
    public static let serverMaxConnections = SettingKey<Int>("server.maxConnections", 10_000, help: "Open connections at most; past it a new one gets 503 and is closed.")
    public static let serverMaxRequestLineBytes = SettingKey<Int>("server.maxRequestLineBytes", 8192, help: "Longest request line (414 past it).")
    public static let serverMaxHeaderBytes = SettingKey<Int>("server.maxHeaderBytes", 16_384, help: "Largest header block (431 past it).")
    public static let serverMaxHeaderCount = SettingKey<Int>("server.maxHeaderCount", 100, help: "Most header fields (431 past it).")
    public static let serverMaxBodyBytes = SettingKey<Int>("server.maxBodyBytes", 1_048_576, help: "Largest request body (413 past it).")
    public static let serverHeaderReadTimeout = SettingKey<Duration>("server.headerReadTimeout", "10s", integerForm: .init("server.headerReadTimeoutSeconds", unit: .seconds(1)), help: "Time to receive a request head before the connection is closed.")
    public static let serverIdleTimeout = SettingKey<Duration>("server.idleTimeout", "60s", integerForm: .init("server.idleTimeoutSeconds", unit: .seconds(1)), help: "Idle keep-alive time before the connection is closed.")
    public static let serverShutdownGrace = SettingKey<Duration>("server.shutdownGrace", "10s", integerForm: .init("server.shutdownGraceSeconds", unit: .seconds(1)), help: "On SIGTERM/SIGINT, how long in-flight requests may finish.")
    // hostile input: JSON request bodies
    public static let serverMaxJsonDepth = SettingKey<Int>("server.maxJsonDepth", 64, help: "Deepest nesting of arrays/objects in a JSON request body (400 past it).")
    public static let serverMaxOutboundBytesPerConnection = SettingKey<Int>("server.maxOutboundBytesPerConnection", 4_194_304, help: "Unsent bytes an HTTP connection may queue behind the response being sent (one response of any size is exempt) before it is dropped as a slow consumer.")
    // transport: total deadlines and the per-address cap.
    public static let serverBodyReadTimeout = SettingKey<Duration>("server.bodyReadTimeout", "30s", integerForm: .init("server.bodyReadTimeoutSeconds", unit: .seconds(1)), help: "Total time to receive a request body after its head, and one WebSocket frame from its first byte (trickled bytes do not extend it); past it 408 (WebSocket: close 1008) and the connection closes.")
    public static let serverOutboundStallTimeout = SettingKey<Duration>("server.outboundStallTimeout", "30s", integerForm: .init("server.outboundStallTimeoutSeconds", unit: .seconds(1)), help: "With response or socket bytes pending, the longest a client may read none of them before it is dropped as a slow consumer.")
    public static let serverMinOutboundBytesPerSecond = SettingKey<Int>("server.minOutboundBytesPerSecond", 16_384, help: "Slowest overall rate a client must read pending bytes at: they must be gone within server.outboundStallTimeout + bytes/rate, a total deadline (0 turns it off).")
    public static let serverMaxConnectionsPerAddress = SettingKey<Int>("server.maxConnectionsPerAddress", 256, help: "Open connections from one client IP address; past it a new one from that address gets 503 and is closed while other addresses are still served (0 turns the cap off).")
    public static let serverTrustedProxies = SettingKey<[String]>("server.trustedProxies", [], help: "Reverse proxies (IPs or IPv4 networks a.b.c.d/n) whose X-Forwarded-For names the client: the login throttle then counts the real client, not the proxy. Anyone else's X-Forwarded-For is ignored.")

    /// The `server.*` keys, in documentation order.
    static let httpKeys: [SettingKeys] = [
        .serverHost, .serverPort, .serverEventLoops, .serverPoller, .serverIoUring, .serverMaxConnections,
        .serverMaxRequestLineBytes, .serverMaxHeaderBytes, .serverMaxHeaderCount, .serverMaxBodyBytes, .serverHeaderReadTimeout,
        .serverIdleTimeout, .serverShutdownGrace, .serverMaxJsonDepth, .serverMaxOutboundBytesPerConnection,
        .serverBodyReadTimeout, .serverOutboundStallTimeout, .serverMinOutboundBytesPerSecond, .serverMaxConnectionsPerAddress,
        .serverTrustedProxies,
    ]
}

extension HTTPServerConfiguration {
    /// Reads `server.*` from `reader`; a bad `server.poller` or `server.ioUring` stops the start
    /// with a message naming the setting. The clock and the connection transform (TLS) are the
    /// caller's to set.
    init(reader: AppConfiguration) throws {
        self.init()
        host = reader[.serverHost]
        port = try ServerPort.check(reader[.serverPort])
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
        headerReadTimeout = reader[.serverHeaderReadTimeout]
        idleTimeout = reader[.serverIdleTimeout]
        shutdownGracePeriod = reader[.serverShutdownGrace]
        maxOutboundBytesPerConnection = reader[.serverMaxOutboundBytesPerConnection]
        bodyReadTimeout = Self.bodyReadTimeout(reader)
        outboundStallTimeout = max(.seconds(1), reader[.serverOutboundStallTimeout])
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

extension TrustedProxies {
    /// `server.trustedProxies`, checked: addresses or IPv4 networks.
    init(reader: AppConfiguration) throws {
        do { try self.init(reader[.serverTrustedProxies]) } catch {
            throw ConfigurationError("\(error)")
        }
    }
}

/// `server.port` checked as a TCP port (RFC 793 §3.1: 16 bits); 0 asks for any free one.
public enum ServerPort {
    public static func check(_ value: Int) throws -> Int {
        guard (0...65_535).contains(value) else {
            throw ConfigurationError("server.port (--port, TOUCHSYNC_PORT) is \(value): a TCP port is 1 to 65535, or 0 for any free port")
        }
        return value
    }
}
