// Conformance server: serves protocol endpoints for external conformance suites.
//   /echo       — RFC 6455 WebSocket echo (Autobahn|Testsuite fuzzingclient, see conformance/autobahn/run.sh)
//   /engine.io/ — raw Engine.IO v4 server echoing every message (engine.io-protocol test-suite)
//   /socket.io/ — Socket.IO v5 server, namespaces `/` and `/custom` (socket.io-protocol test-suite)
//
// conformance-server [--port 3000] [--ping-interval MS] [--ping-timeout MS] [--poller auto|epoll|kqueue|poll]
//                    [--tls-cert PEM --tls-key PEM]   (HTTPS/WSS through TSTLS, as `touchsync serve`)
import ArgumentParser
import Foundation
import Logging
import TSHTTP
import TSSockets
import TSTLS
import TSWebSocket

struct ConformanceServer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance-server",
        abstract: "Serves protocol endpoints for conformance test suites.")

    @Option(help: "TCP port to listen on (0 = any free port; the bound port is printed).")
    var port: Int = 3000

    @Option(help: "Address to bind.")
    var host: String = "127.0.0.1"

    @Option(name: .customLong("ping-interval"), help: "Engine.IO pingInterval in ms (the official test suites use 300).")
    var pingInterval: Int = 300

    @Option(name: .customLong("ping-timeout"), help: "Engine.IO pingTimeout in ms (the official test suites use 200).")
    var pingTimeout: Int = 200

    @Option(help: "Readiness backend: auto (epoll on Linux, kqueue on macOS; TOUCHSYNC_SERVER_POLLER overrides), epoll, kqueue or poll.")
    var poller: String = "auto"

    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "warning"

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain: serve HTTPS/WSS (with --tls-key), as touchsync serve does.")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    func run() throws {
        var logger = Logger(label: "conformance-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning

        var router = RouterBuilder()
        router.get("/echo", WebSocketEcho.handler(configuration: Self.echoConfiguration))
        let app = try ConformanceApp(pingInterval: .milliseconds(pingInterval), pingTimeout: .milliseconds(pingTimeout), logger: logger)
        app.register(into: &router)

        var http = HTTPServerConfiguration()
        http.host = host
        http.port = port
        guard let kind = PollerKind(rawValue: poller), kind.isAvailable else {
            throw ValidationError("--poller must be one of auto, " + Platform.availablePollers.map(\.rawValue).joined(separator: ", "))
        }
        http.poller = kind
        // Autobahn's 9.x cases echo messages of up to 16 MiB: allow that much to be queued.
        http.maxOutboundBytesPerConnection = 64 << 20
        // TLS exactly as TouchSyncServer+TLS.swift sets it up (the tls.* defaults: 10 s handshake
        // deadline, 1024 handshakes under way, 32 pending per address); nil without --tls-cert/--tls-key.
        // A broken pair, or a build without TLS (macOS), stops the start with TLSError's message.
        let tls = try TLSServerSetup.make(configuration: TLSServerSetup.Configuration(certificateFile: tlsCert, privateKeyFile: tlsKey),
                                          logger: Logger(label: "conformance-server.tls"))
        http.connectionTransform = tls?.transformFactory
        let server = HTTPServer(configuration: http, responder: router.freeze(logger: logger), logger: logger)
        let bound = try server.start()
        print("listening on \(tls == nil ? "http" : "https")://\(host):\(bound) (poller \(kind.resolved))")
        fflush(nil)  // all streams (`stdout` itself is not concurrency-safe to name in Swift 6)
        withExtendedLifetime((app, tls)) {
            while true { sleep(3600) }
        }
    }

    /// Limits raised above the production defaults so Autobahn's large-message cases (9.x,
    /// up to 16 MiB per message/frame) are echoed rather than refused with 1009.
    static let echoConfiguration = WebSocketConfiguration(maxFrameSize: 32 << 20, maxMessageSize: 32 << 20)
}

ConformanceServer.main()
