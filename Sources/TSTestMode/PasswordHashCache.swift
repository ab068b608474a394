import TSRoutes
import TSSync
import TSDomain

/// Password hashes reused across fixture loads (test-target mode only): PBKDF2 at the
/// configured iterations is deliberately slow, and a test suite loads the same users before
/// every test. A cached hash is a real salted hash of that password, so login works as usual.
public final class PasswordHashCache: Sendable {
    /// Distinct passwords remembered; past it the cache starts over.
    public let capacity: Int
    private let box = LockedValue<[String: String]>([:])

    public init(capacity: Int = 256) { self.capacity = capacity }

    public func hash(_ password: String, with auth: AuthService) async -> String {
        if let h = box.withLock({ $0[password] }) { return h }
        let h = await auth.hashPassword(password)
        box.withLock { cache in
            if cache.count >= capacity { cache.removeAll() }
            cache[password] = h
        }
        return h
    }
}
