import Foundation
import Logging
import TSCrypto

/// Resolves the HS256 signing secret of the bearer tokens (config `auth.jwtSecret`, env `TOUCHSYNC_JWT_SECRET`).
/// Without one the server generates a secret, keeps it in `<database>.jwtsecret` (mode 0600) so
/// tokens survive restarts, and warns; with `TOUCHSYNC_ENV=production` it refuses to start.
enum SecretStore {
    /// `adviceLevel`: the level of the lines saying where the secret came from (`warning` for a
    /// server; a one-shot tool such as `touchsync migrate` logs them at `debug`).
    static func resolve(configured: String?, databasePath: String, production: Bool, logger: Logger,
                        adviceLevel: Logger.Level = .warning) throws -> [UInt8] {
        if let s = configured, !s.isEmpty {
            guard s.utf8.count >= 16 else { throw ConfigurationError("auth.jwtSecret must be at least 16 bytes long") }
            return Array(s.utf8)
        }
        if production {
            throw ConfigurationError("TOUCHSYNC_ENV=production needs a JWT secret: set TOUCHSYNC_JWT_SECRET or auth.jwtSecret")
        }
        if databasePath == ":memory:" {
            logger.log(level: adviceLevel, "no JWT secret configured: using a random one for this in-memory run (tokens die with the process)")
            return Array(SecureRandom.hexString(bytes: 32).utf8)
        }
        let file = databasePath + ".jwtsecret"
        if let data = FileManager.default.contents(atPath: file), let s = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty {
            logger.log(level: adviceLevel, "no JWT secret configured: using the generated one in \(file); set TOUCHSYNC_JWT_SECRET in production")
            return Array(s.utf8)
        }
        let secret = SecureRandom.hexString(bytes: 32)
        guard FileManager.default.createFile(atPath: file, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("cannot write the generated JWT secret to \(file)")
        }
        logger.log(level: adviceLevel, "no JWT secret configured: generated one and stored it in \(file); set TOUCHSYNC_JWT_SECRET in production")
        return Array(secret.utf8)
    }
}
