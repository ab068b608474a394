import Logging
import TSHTTP
import TSSockets
import TSTLS

/// HTTPS/WSS (docs/tls.md): the TLS set-up from the `tls.*` settings, and its rotation.
extension TouchSyncServer {
    /// nil when `tls.certificateFile`/`tls.privateKeyFile` are unset (plain HTTP). Throws a
    /// `ConfigurationError` when only one is set, the pair is broken, or the build has no TLS.
    static func makeTLS(configuration: TLSServerSetup.Configuration, logger: Logger) throws -> TLSServerSetup? {
        do {
            let setup = try TLSServerSetup.make(configuration: configuration, logger: Logger(label: "touchsync.tls"))
            if let setup { logger.info("HTTPS on: \(setup.summary)") }
            return setup
        } catch {
            throw ConfigurationError("\(error)")
        }
    }

    /// The `tls.redirectPort` server (plain HTTP answering 308 to the HTTPS URL, `/health` served).
    static func makeRedirectServer(port: Int, tls: TLSServerSetup?, https: HTTPServer,
                                   health: any HTTPResponder) throws -> HTTPServer? {
        guard port > 0 else { return nil }
        guard tls != nil else {
            throw ConfigurationError("tls.redirectPort needs HTTPS: set tls.certificateFile and tls.privateKeyFile (--tls-cert/--tls-key)")
        }
        var config = https.configuration
        config.port = port
        config.eventLoops = 1
        config.connectionTransform = nil
        config.maxConnections = min(config.maxConnections, 1024)
        let responder = HTTPSRedirectResponder(httpsPort: { https.port }, fallbackHost: https.configuration.host, health: health)
        return HTTPServer(configuration: config, responder: responder, logger: Logger(label: "touchsync.redirect"))
    }

    /// "https" with TLS on, else "http" (for the banner and printed URLs).
    public var scheme: String { tls == nil ? "http" : "https" }
    /// "wss" with TLS on, else "ws".
    public var webSocketScheme: String { tls == nil ? "ws" : "wss" }

    /// Starts certificate rotation (SIGHUP when `handleSIGHUP`, and the periodic file check).
    func startTLSRotation(handleSIGHUP: Bool) {
        guard let tls, let loop = http.eventLoopGroup?.loops.first else { return }
        tls.startRotation(handleSIGHUP: handleSIGHUP, checkInterval: tls.configuration.reloadCheckInterval, loop: loop)
    }
}
