import TSCrypto
import TSSync

/// Bearer tokens whose signature and claims were checked (`JWT.verify`) under this server's key,
/// with their claims: a request that brings the same token again skips the base64url decoding, the
/// HMAC-SHA256 (RFC 7518 §3.2) and the payload parse, which depend only on the token's bytes and
/// the key, and so cannot change between two uses.
///
/// What it does NOT skip, so a hit never accepts what a fresh check would refuse:
/// - the times (`exp`, `nbf`, `iat` with the leeway, RFC 7519 §4.1.4–§4.1.6), checked against the
///   domain's clock (test mode's movable clock included) on every use (`JWT.checkTimes`);
/// - the user's row: every authenticated request still reads it, in the same query as before, and
///   compares the token's `ver` with the row's `token_version`. Logout (the version goes up) and
///   account deletion (the row goes) are therefore seen at once by every node of a cluster, each of
///   which reads the shared database: no node has anything to invalidate.
///
/// Only tokens that passed the whole check are kept; a refused token (forged, malformed, expired,
/// not yet valid) is never stored, so bad tokens cannot fill it. Bounded by `capacity` entries:
/// when full, the oldest entry goes first (FIFO; a token evicted while still in use costs one full
/// check to come back). About 350 bytes an entry (the token, its `sub`, the table slots).
/// The key is fixed for the cache's life: it belongs to one `AuthService`, whose configuration
/// (and so `jwtKey`) never changes.
final class VerifiedTokenCache: Sendable {
    /// Entries kept at most by a server: one per app user of a capacity run's 10,000, with room.
    static let defaultCapacity = 16_384

    let capacity: Int
    private let state: LockedValue<State>

    private struct State {
        var claims: [String: JWTClaims] = [:]
        /// Insertion order as a ring: `ring[next]` is the oldest entry once the ring is full.
        var ring: [String?]
        var next = 0
    }

    init(capacity: Int = VerifiedTokenCache.defaultCapacity) {
        self.capacity = max(1, capacity)
        state = LockedValue(State(ring: Array(repeating: nil, count: max(1, capacity))))
    }

    /// The claims of `token` when it passed `JWT.verify` before (its times are NOT checked here).
    func claims(for token: String) -> JWTClaims? {
        state.withLock { $0.claims[token] }
    }

    /// Keeps `claims` for `token`, which has just passed `JWT.verify`; evicts the oldest entry when full.
    func insert(_ token: String, _ claims: JWTClaims) {
        state.withLock { s in
            guard s.claims.updateValue(claims, forKey: token) == nil else { return }
            if let oldest = s.ring[s.next] { s.claims.removeValue(forKey: oldest) }
            s.ring[s.next] = token
            s.next = (s.next + 1) % s.ring.count
        }
    }

    /// Entries held now (at most `capacity`).
    var count: Int { state.withLock { $0.claims.count } }
}
