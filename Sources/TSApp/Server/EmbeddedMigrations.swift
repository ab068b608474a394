import Foundation
import Logging
import TSStorage

/// The schema migrations compiled into the executable (`EmbeddedMigrations+Generated.swift`,
/// generated from `Migrations/*.sql` and `Migrations/postgres/*.sql` by `scripts/gen-migrations.sh`), so `touchsync` runs from
/// any directory and as a single copied file. A directory still takes precedence when one is named:
/// `database.migrationsDir` (TOUCHSYNC_DATABASE_MIGRATIONS_DIR) or `TOUCHSYNC_MIGRATIONS_DIR`.
public enum EmbeddedMigrations {
    /// The environment variable naming a migrations directory to use instead of the embedded ones.
    public static let directoryEnvironmentVariable = "TOUCHSYNC_MIGRATIONS_DIR"

    /// The embedded migrations: SQLite's (`files`) and PostgreSQL's (`postgresFiles`); the one
    /// matching the database's dialect is applied.
    public static func migrator() throws -> Migrator { try Migrator(embedded: files, postgres: postgresFiles) }

    /// The migrator start-up uses: the configured directory (it must exist), else
    /// `$TOUCHSYNC_MIGRATIONS_DIR` (it must exist), else the embedded migrations.
    public static func migrator(configuration: AppConfiguration, logger: Logger = Logger(label: "touchsync"),
                         environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Migrator {
        let named: (String, String)? = configuration[.databaseMigrationsDir].map { ($0, SettingKeys.databaseMigrationsDir.path) }
            ?? environment[directoryEnvironmentVariable].flatMap { $0.isEmpty ? nil : ($0, directoryEnvironmentVariable) }
        if let (dir, source) = named {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
                throw ConfigurationError("\(source) names \(dir), which is not a directory (unset it to use the migrations built into touchsync)")
            }
            logger.info("using migrations from \(dir) (\(source))")
            return Migrator(directory: dir)
        }
        return try migrator()
    }
}
