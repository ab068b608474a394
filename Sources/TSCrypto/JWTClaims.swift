/// The registered claims TouchSync puts in its access tokens (RFC 7519 §4.1):
/// `sub` = user id, `iat` / `exp` = NumericDate (seconds since the Unix epoch, UTC), and the
/// optional `nbf` (§4.1.5, "not before"), which `JWT.verify` honours when present.
public struct JWTClaims: Sendable, Hashable {
    public var sub: String
    public var iat: Int64
    public var exp: Int64
    /// Not before (RFC 7519 §4.1.5), honoured with the same leeway as `exp`.
    public var nbf: Int64?
    /// The user's token version when the token was issued (private claim `ver`, RFC 7519 §4.3;
    /// omitted when 0). Logging out increments the version, which revokes every earlier token.
    public var ver: Int64

    public init(sub: String, iat: Int64, exp: Int64, nbf: Int64? = nil, ver: Int64 = 0) {
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.nbf = nbf
        self.ver = ver
    }
}
