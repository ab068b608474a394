import CCrypto
import TSCrypto
import TSJSON
import TSSync

/// APNs token-based authentication ("Establishing a token-based connection to APNs"): a JWT
/// signed with ES256 (RFC 7518 §3.4, ECDSA P-256 + SHA-256, the signature as the 64-byte R‖S)
/// by the team's `.p8` key: header `{"alg": "ES256", "kid": <key id>}`, claims
/// `{"iss": <team id>, "iat": <now>}`. Apple refuses a token older than an hour and one refreshed
/// more often than every 20 minutes, so it is reused and re-signed after `refreshSeconds`
/// (setting `apns.tokenRefreshSeconds`, default 50 minutes).
public final class APNsProviderToken: Sendable {
    public struct KeyError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `@unchecked Sendable` invariant: the key is created once in `init`, freed once in `deinit`,
    /// and only read in between (EVP_DigestSign on a freshly allocated context per signature).
    final class Key: @unchecked Sendable {
        let pkey: OpaquePointer
        init(pkey: OpaquePointer) { self.pkey = pkey }
        deinit { EVP_PKEY_free(pkey) }
    }

    let key: Key
    public let keyId: String
    public let teamId: String
    public let refreshSeconds: Int64
    private let cached = LockedValue<(token: String, issuedAt: Int64)?>(nil)

    /// `pem`: the `.p8` file's text (PKCS#8 `-----BEGIN PRIVATE KEY-----`, a P-256 key).
    public init(pem: String, keyId: String, teamId: String, refreshSeconds: Int64 = 3000) throws {
        let bytes = Array(pem.utf8)
        let pkey: OpaquePointer? = bytes.withUnsafeBufferPointer { buf in
            guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let pkey else { throw KeyError(description: "the APNs key is not a PEM private key (expected the .p8 file from Apple)") }
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC, EVP_PKEY_get_bits(pkey) == 256 else {
            EVP_PKEY_free(pkey)
            throw KeyError(description: "the APNs key must be an EC P-256 key (ES256)")
        }
        key = Key(pkey: pkey)
        self.keyId = keyId
        self.teamId = teamId
        self.refreshSeconds = max(60, refreshSeconds)
    }

    /// The token to send at `now` (Unix seconds): the cached one until it is `refreshSeconds` old.
    public func token(now: Int64) throws -> String {
        if let c = cached.current, now - c.issuedAt < refreshSeconds, now >= c.issuedAt { return c.token }
        let fresh = try sign(issuedAt: now)
        cached.withLock { $0 = (fresh, now) }
        return fresh
    }

    /// Forgets the cached token (after APNs answered 403 ExpiredProviderToken / InvalidProviderToken).
    public func invalidate() { cached.withLock { $0 = nil } }

    func sign(issuedAt: Int64) throws -> String {
        let header = JSONValue.object(["alg": "ES256", "kid": .string(keyId)]).serialized()
        let claims = JSONValue.object(["iss": .string(teamId), "iat": .int(issuedAt)]).serialized()
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let der = try digestSign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(try Self.rawSignature(der))
    }

    /// EVP_DigestSign with SHA-256: the DER-encoded ECDSA-Sig-Value (RFC 3279 §2.2.3).
    func digestSign(_ message: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw KeyError(description: "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key.pkey) == 1 else { throw KeyError(description: "EVP_DigestSignInit failed") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(ctx, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw KeyError(description: "EVP_DigestSign (size) failed")
        }
        var out = [UInt8](repeating: 0, count: length)
        let rc = out.withUnsafeMutableBufferPointer { o in
            message.withUnsafeBufferPointer { EVP_DigestSign(ctx, o.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        guard rc == 1 else { throw KeyError(description: "EVP_DigestSign failed") }
        return Array(out.prefix(length))
    }

    /// DER ECDSA-Sig-Value → R‖S, each left-padded to 32 bytes (RFC 7518 §3.4).
    static func rawSignature(_ der: [UInt8]) throws -> [UInt8] {
        var parsed: OpaquePointer?
        der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            parsed = d2i_ECDSA_SIG(nil, &p, buf.count)
        }
        guard let sig = parsed else { throw KeyError(description: "d2i_ECDSA_SIG failed") }
        defer { ECDSA_SIG_free(sig) }
        var out = [UInt8](repeating: 0, count: 64)
        let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
            guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig) else { return false }
            return BN_bn2binpad(r, o.baseAddress, 32) == 32 && BN_bn2binpad(s, o.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw KeyError(description: "ECDSA signature does not fit P-256") }
        return out
    }
}
