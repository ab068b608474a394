/// What a `TLSConnectionEngine` asks its owner to do, in order.
public enum TLSEngineAction: Sendable, Equatable {
    /// Ciphertext (handshake messages, records, alerts, close_notify) to send to the peer.
    case send([UInt8])
    /// Decrypted application bytes for the layer above (HTTP).
    case deliver([UInt8])
    /// The handshake finished (RFC 8446 §4.4.4 Finished exchanged).
    case handshakeCompleted(TLSHandshakeSummary)
    /// The peer sent close_notify (RFC 8446 §6.1): no more application data will come.
    case peerClosed
    /// The first bytes are a plain-HTTP request (the method token given), not a TLS record:
    /// the client spoke http:// to the https:// port. Close it (with a log line).
    case plainHTTPDetected(method: String)
    /// A fatal TLS error (bad handshake, bad record MAC, unsupported version...). Any `.send`
    /// before it carries the alert; nothing more will be produced. Close the connection.
    case failed(String)
}

/// The negotiated parameters of a finished handshake (for logs and tests).
public struct TLSHandshakeSummary: Sendable, Equatable, CustomStringConvertible {
    /// "TLSv1.2" or "TLSv1.3".
    public let protocolVersion: String
    /// OpenSSL's name of the cipher suite, e.g. "TLS_AES_128_GCM_SHA256".
    public let cipher: String
    /// The ALPN protocol selected (RFC 7301), nil when the client offered none we speak.
    public let alpn: String?
    /// True when the session was resumed (ticket or session id), i.e. an abbreviated handshake.
    public let resumed: Bool

    public init(protocolVersion: String, cipher: String, alpn: String?, resumed: Bool) {
        self.protocolVersion = protocolVersion
        self.cipher = cipher
        self.alpn = alpn
        self.resumed = resumed
    }

    public var description: String {
        "\(protocolVersion) \(cipher) alpn=\(alpn ?? "none")\(resumed ? " resumed" : "")"
    }
}
