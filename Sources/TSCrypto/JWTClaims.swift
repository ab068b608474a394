/// The registered claims TouchSync puts in its access tokens (RFC 7519 §4.1):
/// `sub` = user id, `iat` / `exp` = NumericDate (seconds since the Unix epoch, UTC), and the
/// optional `nbf` (§4.1.5, "not before"), which `JWT.verify` honours when present.
public struct JWTClaims: Sendable, Hashable {
    public var sub: String
    public var iat: Int64
    public var exp: Int64
    public var nbf: Int64?

    public init(sub: String, iat: Int64, exp: Int64, nbf: Int64? = nil) {
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.nbf = nbf
    }
}
