import TSSync
import Dispatch
import TSCrypto
import TSStorage
import TSJSON

/// Register, login, token issue and verification (docs/api.md, "Conventions" and "Auth").
public struct AuthService: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource
    let configuration: DomainConfiguration
    /// The login throttle, shared by every copy of `AuthService`.
    let throttle: LockedValue<LoginThrottle>
    /// Tokens that passed the signature check, shared by every copy of `AuthService`.
    let tokens = VerifiedTokenCache()

    /// Password hashing is deliberately slow; it runs here, off the request threads.
    private static let hashQueue = DispatchQueue(label: "touchsync.password-hash", attributes: .concurrent)

    public struct Session: Sendable {
        public let token: String
        public let user: PublicUser
        public var json: JSONValue { .object(["token": .string(token), "user": user.json]) }
    }

    public func register(_ input: Input) async throws -> Session {
        let username = try input.string("username", maxLength: 32)
        try Self.validateUsername(username)
        let password = try input.string("password", maxLength: 1024)
        guard password.unicodeScalars.count >= 8 else { throw DomainError.validation(field: "password", message: "must be at least 8 characters") }
        let firstName = try input.optionalString("firstName", maxLength: 100)
        let avatarUrl = try input.optionalString("avatarUrl", maxLength: 2048)
        let hash = await hashPassword(password)
        let user = try await createUser(username: username, passwordHash: hash, firstName: firstName, avatarUrl: avatarUrl)
        return Session(token: await issueToken(userId: user.id), user: user)
    }

    /// Inserts a user whose password is already hashed (also used by seeding and fixtures).
    public func createUser(username: String, passwordHash: String, firstName: String?, avatarUrl: String?) async throws -> PublicUser {
        let id = UUIDGenerator.lowercaseV4()
        let now = clock.nowSeconds()
        let seq = sequence.next()
        return try await db.write { c in
            // The UNIQUE username decides a race between two registrations (two nodes): the loser
            // inserts nothing and gets 409, never a constraint error (500).
            guard try c.run("""
                INSERT INTO users (id, username, password_hash, first_name, avatar_url, created_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (username) DO NOTHING
                """, [.text(id), .text(username), .text(passwordHash), .of(firstName), .of(avatarUrl), .int(now), .int(seq)]) == 1 else {
                throw DomainError.conflict("Username is already taken")
            }
            return PublicUser(id: id, username: username, firstName: firstName, avatarUrl: avatarUrl)
        }
    }

    /// Raised when a (username, address) pair has failed too often, or the address is over its
    /// rate of failed logins (429 with `Retry-After`).
    public struct Throttled: Error, Sendable { public let retryAfterSeconds: Int64 }

    /// Throttled per (username, client address), and by a rate of failures per address (see
    /// `LoginThrottle`): a user's failures from one address never refuse that user elsewhere, and
    /// nobody's failures refuse another user from the same address for longer than the rate's
    /// next token. Unknown and existing usernames are counted, answered and hashed alike.
    public func login(_ input: Input, clientAddress: String = "") async throws -> Session {
        let username = try input.string("username", maxLength: 64)
        let password = try input.string("password", maxLength: 1024)
        let pairKey = LoginThrottle.pair(username: username, address: clientAddress)
        let micros = clock.nowMicroseconds()
        let now = clock.nowSeconds()
        if let wait = throttle.withLock({ t in
            [t.retryAfter(pairKey, now: now), t.addressRetryAfter(clientAddress, nowMicroseconds: micros)].compactMap { $0 }.max()
        }) {
            throw Throttled(retryAfterSeconds: wait)
        }
        switch try await verifiedLogin(username: username, password: password) {
        case .success(let session):
            // Only this pair's count is cleared: one account's success must not reset an address's rate.
            throttle.withLock { t in t.recordSuccess(pairKey) }
            return session
        case .wrongPassword, .unknownUser:
            throttle.withLock { t in
                t.recordFailure(pairKey, now: now)
                t.recordAddressFailure(clientAddress, nowMicroseconds: micros)
            }
        }
        throw DomainError.unauthorized("Invalid username or password")
    }

    private enum LoginOutcome { case success(Session), wrongPassword, unknownUser }

    private func verifiedLogin(username: String, password: String) async throws -> LoginOutcome {
        let row = try await db.read { c in
            try c.first("SELECT id, username, first_name, avatar_url, password_hash, token_version FROM users WHERE username = ?", [.text(username)]) {
                (Readers.user($0, at: 0), $0.string(4), $0.int(5))
            }
        }
        // Verify against a dummy hash when the user does not exist, so both failures cost the same.
        let encoded = row?.1 ?? Self.dummyHash(iterations: configuration.passwordIterations)
        let ok = await verifyPassword(password, encoded: encoded)
        guard let user = row?.0 else { return .unknownUser }
        guard ok else { return .wrongPassword }
        return .success(Session(token: await issueToken(userId: user.id, version: row?.2 ?? 0), user: user))
    }

    public func me(userId: String) async throws -> PublicUser {
        guard let u = try await db.read({ c in try Readers.publicUser(c, id: userId) }) else { throw DomainError.notFound("User") }
        return u
    }

    /// A token for `userId` at its token `version` (read from the database when not given, so a
    /// token printed by the CLI or the demo banner is valid after a logout).
    public func issueToken(userId: String, lifetimeSeconds: Int64? = nil, version: Int64? = nil) async -> String {
        var ver = version ?? 0
        if version == nil,
           let stored = try? await db.read({ c in try c.scalarInt("SELECT token_version FROM users WHERE id = ?", [.text(userId)]) }) {
            ver = stored
        }
        let now = clock.nowSeconds()
        return JWT.sign(claims: JWTClaims(sub: userId, iat: now, exp: now + (lifetimeSeconds ?? configuration.tokenLifetime.wholeSeconds), ver: Int64(ver)),
                        secret: configuration.jwtSecret)
    }

    /// The user of a valid token whose user still exists and has not logged out since the token
    /// was issued (its `ver` claim equals the user's `token_version`, read in the same query that
    /// loads the user: no extra database round trip); 401 otherwise.
    public func authenticate(token: String) async throws -> PublicUser {
        try await verifiedSession(token: token).user
    }

    func verifiedSession(token: String) async throws -> (user: PublicUser, version: Int64) {
        let claims = try verifyToken(token).claims
        guard let row = try await db.read({ c in
            try c.first("SELECT id, username, first_name, avatar_url, token_version FROM users WHERE id = ?", [.text(claims.sub)]) {
                (Readers.user($0, at: 0), $0.int(4))
            }
        }), row.1 == claims.ver else {
            throw DomainError.unauthorized("Invalid or expired token")
        }
        return (row.0, row.1)
    }

    /// `POST /api/auth/refresh`: a fresh token (new `iat`/`exp`, same version) for a valid one.
    public func refresh(token: String) async throws -> Session {
        let (user, version) = try await verifiedSession(token: token)
        return Session(token: await issueToken(userId: user.id, version: version), user: user)
    }

    /// `POST /api/auth/logout`: revokes every token issued to `userId` so far.
    public func logout(userId: String) async throws {
        try await db.write { c in
            try c.run("UPDATE users SET token_version = token_version + 1 WHERE id = ?", [.text(userId)])
        }
    }

    public func userId(forUsername username: String) async throws -> String? {
        try await db.read { c in try c.first("SELECT id FROM users WHERE username = ?", [.text(username)]) { $0.string(0) } }
    }

    public func hashPassword(_ password: String) async -> String {
        let iterations = configuration.passwordIterations
        return await withCheckedContinuation { cont in
            Self.hashQueue.async { cont.resume(returning: PasswordHasher(iterations: iterations).hash(password: password)) }
        }
    }

    func verifyPassword(_ password: String, encoded: String) async -> Bool {
        await withCheckedContinuation { cont in
            Self.hashQueue.async { cont.resume(returning: PasswordHasher().verify(password: password, encoded: encoded)) }
        }
    }

    /// One dummy hash per cost, computed once.
    private static let dummy = LockedValue<[Int: String]>([:])

    private static func dummyHash(iterations: Int) -> String {
        dummy.withLock { cache in
            if let h = cache[iterations] { return h }
            let h = PasswordHasher(iterations: iterations).hash(password: "not-a-real-password")
            cache[iterations] = h
            return h
        }
    }

    /// 3–32 characters of `[a-z0-9_.]`: safe in URLs and mentions, and unambiguous to compare.
    static func validateUsername(_ name: String) throws(DomainError) {
        guard (3...32).contains(name.utf8.count) else { throw .validation(field: "username", message: "must be 3 to 32 characters") }
        for b in name.utf8 {
            let ok = (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2E
            if !ok { throw .validation(field: "username", message: "may contain only a-z, 0-9, '_' and '.'") }
        }
    }
}
