import CCrypto

/// Salted slow password hashing: PBKDF2-HMAC-SHA256 (RFC 8018 §5.2) via libcrypto's
/// `PKCS5_PBKDF2_HMAC`, 16-byte random salt, 32-byte derived key.
///
/// Encoded form (stored in the database):
/// `pbkdf2-sha256$<iterations>$<base64 salt>$<base64 hash>` (standard Base64 with padding).
/// The iteration count travels with the hash, so raising `iterations` later keeps old
/// hashes verifiable (`needsRehash` tells when to upgrade one).
public struct PasswordHasher: Sendable {
    public static let scheme = "pbkdf2-sha256"
    /// OWASP (2023) recommendation for PBKDF2-HMAC-SHA256.
    public static let defaultIterations = 210_000
    /// Bounds accepted when *verifying* an encoded hash, so a crafted value cannot make one
    /// login cost minutes of CPU.
    public static let maximumIterations = 10_000_000
    public static let saltLength = 16
    public static let hashLength = 32

    /// PBKDF2 iteration count for new hashes (the cost setting). Tests use a small value.
    public var iterations: Int

    public init(iterations: Int = PasswordHasher.defaultIterations) {
        precondition(iterations >= 1 && iterations <= PasswordHasher.maximumIterations, "iterations out of range")
        self.iterations = iterations
    }

    /// Hashes `password` with a fresh random salt.
    public func hash(password: String) -> String {
        let salt = SecureRandom.bytes(Self.saltLength)
        let derived = Self.pbkdf2(password: Array(password.utf8), salt: salt, iterations: iterations, length: Self.hashLength)
        return "\(Self.scheme)$\(iterations)$\(Base64.encode(salt))$\(Base64.encode(derived))"
    }

    /// True when `password` matches `encoded`. The comparison is constant-time; a malformed
    /// or foreign-scheme `encoded` value is simply `false`.
    public func verify(password: String, encoded: String) -> Bool {
        Self.verify(password: password, encoded: encoded)
    }

    /// True when `password` matches `encoded`. Needs no hasher: the cost is in the encoding.
    public static func verify(password: String, encoded: String) -> Bool {
        guard let parsed = parse(encoded) else { return false }
        let derived = pbkdf2(password: Array(password.utf8), salt: parsed.salt,
                             iterations: parsed.iterations, length: parsed.hash.count)
        return ConstantTime.equals(derived, parsed.hash)
    }

    /// Spends the same time as `verify` against a hash of this hasher's cost, and returns
    /// false. Call it when the user does not exist so a login's timing does not reveal that.
    public func verifyDummy(password: String) -> Bool {
        let derived = Self.pbkdf2(password: Array(password.utf8), salt: [UInt8](repeating: 0, count: Self.saltLength),
                                  iterations: iterations, length: Self.hashLength)
        _ = ConstantTime.equals(derived, [UInt8](repeating: 0, count: Self.hashLength))
        return false
    }

    /// True when `encoded` is not in this hasher's scheme or uses another iteration count.
    public func needsRehash(encoded: String) -> Bool {
        guard let parsed = Self.parse(encoded) else { return true }
        return parsed.iterations != iterations
    }

    // MARK: - Internals

    struct Parsed { var iterations: Int; var salt: [UInt8]; var hash: [UInt8] }

    static func parse(_ encoded: String) -> Parsed? {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == scheme[...],
              let iterations = Int(parts[1]), iterations >= 1, iterations <= maximumIterations,
              let salt = Base64.decode(String(parts[2])), !salt.isEmpty, salt.count <= 64,
              let hash = Base64.decode(String(parts[3])), hash.count >= 16, hash.count <= 64
        else { return nil }
        return Parsed(iterations: iterations, salt: salt, hash: hash)
    }

    /// PBKDF2-HMAC-SHA256 (RFC 8018 §5.2). Test vectors: RFC 7914 §11.
    public static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        precondition(iterations >= 1 && length >= 1)
        var out = [UInt8](repeating: 0, count: length)
        let pass = password.isEmpty ? [0] : password
        let saltBytes = salt.isEmpty ? [0] : salt
        let ok = pass.withUnsafeBufferPointer { p in
            saltBytes.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    p.withMemoryRebound(to: CChar.self) { pc in
                        ts_pbkdf2_hmac_sha256(pc.baseAddress, password.count, s.baseAddress, salt.count,
                                              UInt32(clamping: iterations), o.baseAddress, length)
                    }
                }
            }
        }
        precondition(ok == 1, "PBKDF2-HMAC-SHA256 failed")
        return out
    }
}
