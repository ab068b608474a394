#if canImport(CTLS)
import CTLS
import Foundation

/// A server TLS configuration: one certificate chain and private key (PEM), the protocol and
/// cipher policy, ALPN and session resumption. Immutable once made; connections share it.
///
/// Policy (docs/tls.md, Mozilla "intermediate" profile v5.7):
/// - TLS 1.2 (RFC 5246) and TLS 1.3 (RFC 8446) only;
/// - TLS 1.3 suites: OpenSSL's defaults (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305);
///   TLS 1.2 suites: ECDHE/DHE with AES-GCM or ChaCha20-Poly1305 only (`intermediateCiphers12`);
///   groups X25519, P-256, P-384; FFDHE parameters automatic (RFC 7919);
/// - ALPN (RFC 7301): `http/1.1`;
/// - renegotiation and TLS compression off;
/// - session resumption: tickets on (RFC 8446 §4.6.1, RFC 5077), plus a server session cache.
// @unchecked Sendable: the SSL_CTX is fully configured in `init` and never mutated afterwards;
// OpenSSL locks its internals (reference counts, session cache) for concurrent SSL_new/use.
public final class TLSContext: @unchecked Sendable {
    /// The Mozilla "intermediate" TLS 1.2 cipher list.
    public static let intermediateCiphers12 =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
        + "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305"
    public static let intermediateCiphers13 = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

    let ctx: OpaquePointer
    public let certificateFile: String
    public let privateKeyFile: String
    /// The leaf certificate's subject and expiry, for log lines ("CN=localhost, until ...").
    public let leafSummary: String

    /// Loads and checks the pair. Throws a `TLSError` naming the file and OpenSSL's reason when
    /// a file is missing or unreadable, not PEM, or the key does not match the certificate.
    public init(certificateFile: String, privateKeyFile: String) throws {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        for (what, path) in [("certificate", certificateFile), ("private key", privateKeyFile)] where !FileManager.default.isReadableFile(atPath: path) {
            let reason = FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"
            throw TLSError("cannot read TLS \(what) file \(path): \(reason)")
        }
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new failed: \(Self.opensslError())") }
        var ok = false
        defer { if !ok { SSL_CTX_free(ctx) } }
        guard ts_ssl_ctx_set_min_proto_version(ctx, ts_tls1_2_version()) == 1,
              ts_ssl_ctx_set_max_proto_version(ctx, ts_tls1_3_version()) == 1 else {
            throw TLSError("cannot restrict TLS to versions 1.2-1.3: \(Self.opensslError())")
        }
        _ = ts_ssl_ctx_set_options(ctx, ts_server_options())
        guard SSL_CTX_set_cipher_list(ctx, Self.intermediateCiphers12) == 1,
              SSL_CTX_set_ciphersuites(ctx, Self.intermediateCiphers13) == 1 else {
            throw TLSError("cannot set the cipher suites: \(Self.opensslError())")
        }
        _ = ts_ssl_ctx_set1_groups_list(ctx, "X25519:prime256v1:secp384r1")
        _ = ts_ssl_ctx_set_dh_auto(ctx)
        _ = ts_ssl_ctx_set_release_buffers(ctx)
        _ = ts_ssl_ctx_set_session_cache_server(ctx)
        let sid: [UInt8] = Array("touchsync".utf8)
        _ = SSL_CTX_set_session_id_context(ctx, sid, UInt32(sid.count))
        ts_ssl_ctx_use_alpn_http11(ctx)

        guard SSL_CTX_use_certificate_chain_file(ctx, certificateFile) == 1 else {
            throw TLSError("cannot load the TLS certificate chain from \(certificateFile) (expected PEM): \(Self.opensslError())")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            let reason = Self.opensslError()
            if reason.contains("key values mismatch") {  // X509_R_KEY_VALUES_MISMATCH, checked while loading
                throw TLSError("the TLS private key \(privateKeyFile) does not match the certificate \(certificateFile): \(reason)")
            }
            throw TLSError("cannot load the TLS private key from \(privateKeyFile) (expected an unencrypted PEM key): \(reason)")
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw TLSError("the TLS private key \(privateKeyFile) does not match the certificate \(certificateFile): \(Self.opensslError())")
        }
        self.ctx = ctx
        self.leafSummary = Self.describeLeaf(ctx)
        ok = true
    }

    deinit { SSL_CTX_free(ctx) }

    /// A new server-side SSL object for one connection.
    func makeSSL() -> OpaquePointer? { SSL_new(ctx) }

    /// OpenSSL's oldest queued error as text (and clears the queue).
    static func opensslError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = ts_err_pop_string(&buffer, buffer.count)
        if code == 0 { return "no OpenSSL error queued" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func describeLeaf(_ ctx: OpaquePointer) -> String {
        guard let leaf = SSL_CTX_get0_certificate(ctx) else { return "no certificate" }
        var subject = "?"
        if let name = X509_get_subject_name(leaf), let line = X509_NAME_oneline(name, nil, 0) {
            subject = String(cString: line)
            CRYPTO_free(line, #fileID, #line)
        }
        var until = "?"
        if let notAfter = X509_get0_notAfter(leaf), let bio = BIO_new(BIO_s_mem()) {
            if ASN1_TIME_print(bio, notAfter) == 1 {
                var text = [CChar](repeating: 0, count: 64)
                let n = BIO_read(bio, &text, Int32(text.count - 1))
                if n > 0 { until = String(decoding: text.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            }
            BIO_free(bio)
        }
        return "\(subject), valid until \(until)"
    }
}
#endif
