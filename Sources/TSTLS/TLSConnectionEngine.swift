#if canImport(CTLS)
import CTLS

/// One TLS connection as a pure state machine over two memory BIOs: no socket, no thread, no
/// clock. Feed it the ciphertext read from the peer (`receive`) and the plaintext to send
/// (`encrypt`); it answers with `TLSEngineAction`s (ciphertext to send, plaintext to deliver,
/// handshake completed, peer closed, plain HTTP detected, fatal error).
///
/// libssl never blocks here: its read BIO returns "retry" when empty, so SSL_do_handshake /
/// SSL_read report SSL_ERROR_WANT_READ ("feed me more"), and its write BIO grows, so
/// SSL_ERROR_WANT_WRITE cannot happen (it is still handled: the engine drains and goes on).
/// Bytes written before the handshake finishes are held and encrypted once it does.
///
/// Not thread-safe: one owner (the connection's event loop).
public final class TLSConnectionEngine {
    public enum Role: Sendable { case server, client }

    let ssl: OpaquePointer  // internal: tests resume sessions through it
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    public let role: Role
    public private(set) var isHandshakeComplete = false
    /// True after a fatal error, a detected plain-HTTP request, or a close_notify from the peer.
    public private(set) var isFinished = false
    private var sawFirstByte = false
    private var sentCloseNotify = false
    private var heldPlaintext: [UInt8] = []
    /// Largest plaintext record (RFC 8446 §5.1): SSL_read is called with this much room.
    private static let readChunk = 16 * 1024

    /// A server-side engine using `context`'s certificate and policy.
    public convenience init(context: TLSContext) throws {
        guard let ssl = context.makeSSL() else { throw TLSError("SSL_new failed: \(TLSContext.opensslError())") }
        try self.init(ssl: ssl, role: .server)
    }

    /// A client-side engine over an SSL_CTX the caller configured (trust store, verification);
    /// `serverName` goes into SNI and is checked against the certificate (RFC 6125).
    /// Used by tests and tools; the SSL_CTX may be freed by the caller afterwards.
    public convenience init(clientContext: OpaquePointer, serverName: String) throws {
        guard let ssl = SSL_new(clientContext) else { throw TLSError("SSL_new failed: \(TLSContext.opensslError())") }
        _ = ts_ssl_set_tlsext_host_name(ssl, serverName)
        _ = SSL_set1_host(ssl, serverName)
        try self.init(ssl: ssl, role: .client)
    }

    private init(ssl: OpaquePointer, role: Role) throws {
        guard let r = BIO_new(BIO_s_mem()), let w = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError("BIO_new failed")
        }
        _ = ts_bio_set_mem_eof_return(r, -1)  // empty = "retry", never EOF
        _ = ts_bio_set_mem_eof_return(w, -1)
        SSL_set_bio(ssl, r, w)  // the SSL owns both BIOs from here on
        self.ssl = ssl
        self.readBIO = r
        self.writeBIO = w
        self.role = role
        if role == .server { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
    }

    deinit { SSL_free(ssl) }

    /// Starts the handshake: a client engine returns its ClientHello; a server one nothing.
    public func start() -> [TLSEngineAction] {
        guard role == .client else { return [] }
        var actions: [TLSEngineAction] = []
        advance(&actions)
        return actions
    }

    /// Ciphertext from the peer.
    public func receive(_ bytes: UnsafeRawBufferPointer) -> [TLSEngineAction] {
        var actions: [TLSEngineAction] = []
        guard !isFinished, bytes.count > 0 else { return actions }
        if !sawFirstByte && role == .server {
            sawFirstByte = true
            if let method = Self.plainHTTPMethod(bytes) {
                isFinished = true
                return [.plainHTTPDetected(method: method)]
            }
        }
        var offset = 0
        while offset < bytes.count {
            let n = BIO_write(readBIO, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, Int(Int32.max))))
            guard n > 0 else { return fail(&actions, "BIO_write failed") }
            offset += Int(n)
        }
        advance(&actions)
        return actions
    }

    public func receive(_ bytes: [UInt8]) -> [TLSEngineAction] {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// Plaintext to send. Returns the records (one `.send`), or nothing while the handshake is
    /// still running (the bytes are held and come out with `.handshakeCompleted`).
    public func encrypt(_ parts: [UInt8]...) -> [TLSEngineAction] {
        var actions: [TLSEngineAction] = []
        guard !isFinished, !sentCloseNotify else { return actions }
        if !isHandshakeComplete {
            for p in parts { heldPlaintext += p }
            return actions
        }
        for p in parts where !p.isEmpty {
            guard writeAll(p, &actions) else { return actions }
        }
        drainOutput(&actions)
        return actions
    }

    /// Our close_notify (RFC 8446 §6.1), once; nothing after a fatal error.
    public func shutdown() -> [TLSEngineAction] {
        var actions: [TLSEngineAction] = []
        guard !sentCloseNotify, isHandshakeComplete, !(isFinished && !receivedCloseNotify) else { return actions }
        sentCloseNotify = true
        _ = SSL_shutdown(ssl)
        drainOutput(&actions)
        ERR_clear_error()
        return actions
    }
    private var receivedCloseNotify = false

    // MARK: internals

    /// Runs the handshake as far as the buffered input allows, then reads application data.
    private func advance(_ actions: inout [TLSEngineAction]) {
        if !isHandshakeComplete {
            let r = SSL_do_handshake(ssl)
            if r != 1 {
                let err = SSL_get_error(ssl, r)
                drainOutput(&actions)
                if err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE { return }
                _ = fail(&actions, "TLS handshake failed: \(Self.describe(err))")
                return
            }
            isHandshakeComplete = true
            drainOutput(&actions)
            actions.append(.handshakeCompleted(summary()))
            if !heldPlaintext.isEmpty {
                let held = heldPlaintext
                heldPlaintext = []
                guard writeAll(held, &actions) else { return }
                drainOutput(&actions)
            }
        }
        readApplicationData(&actions)
    }

    private func readApplicationData(_ actions: inout [TLSEngineAction]) {
        var plaintext: [UInt8] = []
        withUnsafeTemporaryAllocation(byteCount: Self.readChunk, alignment: 16) { buffer in
            while true {
                let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
                if n > 0 {
                    plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<Int(n)]))
                    continue
                }
                let err = SSL_get_error(ssl, n)
                switch err {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    return
                case SSL_ERROR_ZERO_RETURN:
                    receivedCloseNotify = true
                    return
                default:
                    if !plaintext.isEmpty { actions.append(.deliver(plaintext)); plaintext = [] }
                    drainOutput(&actions)
                    _ = fail(&actions, "TLS record error: \(Self.describe(err))")
                    return
                }
            }
        }
        drainOutput(&actions)  // post-handshake messages (tickets, KeyUpdate replies)
        if !plaintext.isEmpty { actions.append(.deliver(plaintext)) }
        if receivedCloseNotify && !isFinished {
            isFinished = true
            actions.append(.peerClosed)
        }
    }

    private func writeAll(_ bytes: [UInt8], _ actions: inout [TLSEngineAction]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                SSL_write(ssl, raw.baseAddress! + offset, Int32(min(raw.count - offset, Int(Int32.max))))
            }
            if n > 0 { offset += Int(n); continue }
            let err = SSL_get_error(ssl, n)
            if err == SSL_ERROR_WANT_WRITE { drainOutput(&actions); continue }  // memory BIO: not expected
            drainOutput(&actions)
            _ = fail(&actions, "TLS write failed: \(Self.describe(err))")
            return false
        }
        return true
    }

    /// Moves everything libssl wrote into the write BIO into one `.send`.
    private func drainOutput(_ actions: inout [TLSEngineAction]) {
        let pending = ts_bio_pending(writeBIO)
        guard pending > 0 else { return }
        let out = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            var filled = 0
            while filled < pending {
                let n = BIO_read(writeBIO, buffer.baseAddress! + filled, Int32(pending - filled))
                if n <= 0 { break }
                filled += Int(n)
            }
            count = filled
        }
        if case .send(let previous)? = actions.last {
            actions[actions.count - 1] = .send(previous + out)
        } else {
            actions.append(.send(out))
        }
    }

    private func fail(_ actions: inout [TLSEngineAction], _ message: String) -> [TLSEngineAction] {
        isFinished = true
        actions.append(.failed(message))
        return actions
    }

    private func summary() -> TLSHandshakeSummary {
        let version = String(cString: SSL_get_version(ssl))
        let cipher = SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? "?"
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        let alpn = data.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
        return TLSHandshakeSummary(protocolVersion: version, cipher: cipher, alpn: alpn.flatMap { $0.isEmpty ? nil : $0 },
                                   resumed: SSL_session_reused(ssl) == 1)
    }

    private static func describe(_ err: Int32) -> String {
        let reason = TLSContext.opensslError()
        switch err {
        case SSL_ERROR_SSL: return reason
        case SSL_ERROR_SYSCALL: return "SSL_ERROR_SYSCALL (\(reason))"
        default: return "SSL error \(err) (\(reason))"
        }
    }
}
#endif

#if canImport(CTLS)
extension TLSConnectionEngine {
    static func plainHTTPMethod(_ bytes: UnsafeRawBufferPointer) -> String? {
        PlainHTTPDetector.method(in: bytes)
    }
}
#endif
