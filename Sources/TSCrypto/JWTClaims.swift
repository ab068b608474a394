/// The registered claims TouchSync puts in its access tokens (RFC 7519 §4.1):
/// `sub` = user id, `iat` / `exp` = NumericDate (seconds since the Unix epoch, UTC).
public struct JWTClaims: Sendable, Hashable {
    public var sub: String
    public var iat: Int64
    public var exp: Int64
    /// The user's token version when the token was issued (private claim `ver`, RFC 7519 §4.3;
    /// omitted when 0). Logging out increments the version, which revokes every earlier token.
    public var ver: Int64

    public init(sub: String, iat: Int64, exp: Int64, ver: Int64 = 0) {
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.ver = ver
    }
}
