import TSCrypto
import TSStorage

/// A bearer token whose signature and times are checked (on the caller's thread, no I/O) but whose
/// user row is not read yet: a read path checks it inside its own `Database.read`
/// (`AuthService.sessionUser`), so an authenticated read is one trip to a reader thread, not two.
public struct VerifiedToken: Sendable {
    let claims: JWTClaims

    /// The user the token was issued to (its `sub`; the row is not read yet).
    public var userId: String { claims.sub }
}

extension AuthService {
    /// The token's signature, `exp`/`nbf` (with the configured leeway) checked: 401 otherwise. A
    /// token that passed before is found in `tokens` and only its times are checked again (what
    /// that leaves out cannot change: `VerifiedTokenCache`); the user's row is read by the caller
    /// either way.
    public func verifyToken(_ token: String) throws -> VerifiedToken {
        let now = clock.nowSeconds(), leeway = configuration.tokenLeeway.wholeSeconds
        do {
            if let claims = tokens.claims(for: token) {
                try JWT.checkTimes(claims, now: now, clockSkewSeconds: leeway)
                return VerifiedToken(claims: claims)
            }
            let claims = try JWT.verify(token, key: configuration.jwtKey, now: now, clockSkewSeconds: leeway)
            tokens.insert(token, claims)
            return VerifiedToken(claims: claims)
        } catch {
            throw DomainError.unauthorized("Invalid or expired token")
        }
    }

    /// The token's user, read on `c` (inside the caller's read): 401 when the user is gone or the
    /// token was revoked (its version is not the user's current one), as `authenticate` does.
    static func sessionUser(_ c: SQLConnection, _ token: VerifiedToken) throws -> PublicUser {
        guard let row = try c.first("SELECT id, username, first_name, avatar_url, token_version FROM users WHERE id = ?",
                                    [.text(token.claims.sub)], { (Readers.user($0, at: 0), $0.int(4)) }),
              row.1 == token.claims.ver else {
            throw DomainError.unauthorized("Invalid or expired token")
        }
        return row.0
    }
}
