import TSCrypto

/// The secret and clock of the JWT tests, and tokens built by hand: any header and payload,
/// signed with HMAC-SHA256, so a test can present what `JWT.sign` would never write.
enum JWTForging {
    static let secret = Array("test-secret-please-change".utf8)
    static let now: Int64 = 1_700_000_000

    /// `header`.`payload` (each base64url-encoded as given), signed under `key`.
    static func forge(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String, key: [UInt8] = JWTForging.secret) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMAC.sha256(key: key, message: Array(input.utf8)))
    }
}
