import TSTLS

/// HTTPS/WSS on the listener (`tls.*`, docs/tls.md).
extension SettingKeys {
    // TLS: HTTPS/WSS on the listener.
    public static let tlsCertificateFile = SettingKey<String?>("tls.certificateFile", nil, help: "PEM certificate chain (leaf first) for HTTPS on the listener (serve --tls-cert); with tls.privateKeyFile set the server speaks only HTTPS/WSS. Reloaded on SIGHUP or when the file changes (docs/tls.md). Linux builds only.")
    public static let tlsPrivateKeyFile = SettingKey<String?>("tls.privateKeyFile", nil, help: "Unencrypted PEM private key of tls.certificateFile (serve --tls-key).")
    public static let tlsHandshakeTimeout = SettingKey<Duration>("tls.handshakeTimeout", "10s", integerForm: .init("tls.handshakeTimeoutSeconds", unit: .seconds(1)), help: "Total time from accept to a finished TLS handshake (a trickled ClientHello does not extend it); past it the connection is closed with a log line.")
    public static let tlsMaxConcurrentHandshakes = SettingKey<Int>("tls.maxConcurrentHandshakes", 1024, help: "TLS handshakes past their first ClientHello byte in progress at once across the server (each holds a TLS session and its buffers, about 48 KiB, and costs a private-key operation: 1024 is about 48 MiB); past it such a connection is closed with a log line. Silent connections are bounded per address by tls.maxHandshakesPerAddress (0 turns the bound off).")
    // tls: a silent connection must not hold a handshake slot others need.
    public static let tlsMaxHandshakesPerAddress = SettingKey<Int>("tls.maxHandshakesPerAddress", 32, help: "TLS handshakes in progress at once from one client IP address, silent connections (no ClientHello yet) included; past it a new connection from that address is closed at once with a log line while other addresses are served (0 turns the bound off).")
    public static let tlsReloadCheckInterval = SettingKey<Duration>("tls.reloadCheckInterval", "60s", integerForm: .init("tls.reloadCheckSeconds", unit: .seconds(1)), help: "How often the certificate and key files are checked for a change (then reloaded for new connections; SIGHUP reloads at once); 0 turns the check off.")
    public static let tlsRedirectPort = SettingKey<Int>("tls.redirectPort", 0, help: "With HTTPS on, a second plain-HTTP port on server.host that answers 308 to the same URL on https:// (GET /health is served as is); 0 = none.")

    /// The `tls.*` keys, in documentation order.
    static let tlsKeys: [SettingKeys] = [
        .tlsCertificateFile, .tlsPrivateKeyFile, .tlsHandshakeTimeout, .tlsMaxConcurrentHandshakes, .tlsMaxHandshakesPerAddress,
        .tlsReloadCheckInterval, .tlsRedirectPort,
    ]
}

extension TLSServerSetup.Configuration {
    init(reader: AppConfiguration) {
        self.init(certificateFile: reader[.tlsCertificateFile], privateKeyFile: reader[.tlsPrivateKeyFile])
        handshakeTimeout = max(.seconds(1), reader[.tlsHandshakeTimeout])
        maxConcurrentHandshakes = reader[.tlsMaxConcurrentHandshakes]
        maxHandshakesPerAddress = reader[.tlsMaxHandshakesPerAddress]
        reloadCheckInterval = reader[.tlsReloadCheckInterval]
        redirectPort = reader[.tlsRedirectPort]
    }
}
