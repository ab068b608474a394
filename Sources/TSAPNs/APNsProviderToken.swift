import CCrypto
import TSCrypto
import TSJSON
import TSSync

/// APNs token-based authentication ("Establishing a token-based connection to APNs"): a JWT
/// signed with ES256 (RFC 7518 §3.4, ECDSA P-256 + SHA-256, the signature as the 64-byte R‖S)
/// by the team's `.p8` key: header `{"alg": "ES256", "kid": <key id>}`, claims
/// `{"iss": <team id>, "iat": <now>}`. Apple refuses a token older than an hour and one refreshed
/// more often than every 20 minutes, so it is reused and re-signed after `refreshInterval`
/// (setting `apns.tokenRefresh`, default 50 minutes).
public final class APNsProviderToken: Sendable {
    public struct KeyError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `@unchecked Sendable` invariant: the key is created once in `init`, freed once in `deinit`,
    /// and only read in between (each signature uses a freshly allocated signing context).
    final class Key: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
        init(handle: UnsafeMutableRawPointer) { self.handle = handle }
        deinit { ts_es256_key_free(handle) }
    }

    let key: Key
    public let keyId: String
    public let teamId: String
    /// Age at which the token is signed anew (at least a minute; whole seconds).
    public let refreshInterval: Duration
    private let cached = LockedValue<(token: String, issuedAt: Int64)?>(nil)

    /// `pem`: the `.p8` file's text (PKCS#8 `-----BEGIN PRIVATE KEY-----`, a P-256 key).
    public init(pem: String, keyId: String, teamId: String, refreshInterval: Duration = .seconds(3000)) throws {
        guard ts_es256_available() == 1 else {
            throw KeyError(description: "APNs needs ES256 signing, which this build lacks (built without OpenSSL, e.g. on macOS)")
        }
        let bytes = Array(pem.utf8)
        guard let handle = bytes.withUnsafeBufferPointer({ ts_es256_key_from_pem($0.baseAddress, $0.count) }) else {
            throw KeyError(description: "the APNs key must be a PEM EC P-256 private key (the .p8 file from Apple)")
        }
        key = Key(handle: handle)
        self.keyId = keyId
        self.teamId = teamId
        self.refreshInterval = max(.seconds(60), refreshInterval)
    }

    /// The token to send at `now` (Unix seconds): the cached one until it is `refreshInterval` old.
    public func token(now: Int64) throws -> String {
        if let c = cached.current, now - c.issuedAt < refreshInterval.wholeSeconds, now >= c.issuedAt { return c.token }
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
        let message = Array(signingInput.utf8)
        var signature = [UInt8](repeating: 0, count: 64)
        let ok = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { ts_es256_sign(key.handle, $0.baseAddress, $0.count, out.baseAddress) }
        }
        guard ok == 1 else { throw KeyError(description: "ES256 signing failed") }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// True when `signature` (R‖S) is this key's ES256 signature of `message`.
    func verifies(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return message.withUnsafeBufferPointer { m in
            signature.withUnsafeBufferPointer { ts_es256_verify(key.handle, m.baseAddress, m.count, $0.baseAddress) }
        } == 1
    }
}
