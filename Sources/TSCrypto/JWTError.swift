/// Why a token was refused. Every case maps to HTTP 401 / Socket.IO `unauthorized`;
/// the detail is for logs, never for clients.
public enum JWTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not three base64url segments, undecodable, not a JSON object, or an over-long token.
    case malformed(String)
    /// The header's `alg` is not exactly `HS256` (includes `none`), or it carries `crit`.
    case unsupportedAlgorithm(String)
    /// The header's `typ` is present and not `JWT`.
    case unsupportedType(String)
    /// The HMAC does not match.
    case invalidSignature
    /// `sub`, `iat` or `exp` missing, or any of them or `nbf` of the wrong type.
    case invalidClaims(String)
    /// `now >= exp + leeway`.
    case expired
    /// `now + leeway < nbf` (RFC 7519 §4.1.5).
    case notYetValid
    /// `iat` is later than `now` plus the allowed clock skew, or after `exp`.
    case issuedInFuture

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed token: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported JWT alg \(alg)"
        case .unsupportedType(let typ): return "unsupported JWT typ \(typ)"
        case .invalidSignature: return "invalid token signature"
        case .invalidClaims(let why): return "invalid token claims: \(why)"
        case .expired: return "token expired"
        case .notYetValid: return "token not valid yet (nbf)"
        case .issuedInFuture: return "token issued in the future"
        }
    }
}
