import Foundation
import Logging
import TSStorage

/// The schema migrations compiled into the executable (`files` and `postgresFiles`, generated from
/// `Migrations/*.sql` and `Migrations/postgres/*.sql` at build time by the EmbedMigrations plugin), so `touchsync` runs from
/// any directory and as a single copied file. A directory still takes precedence when one is named:
/// `database.migrationsDir` (TOUCHSYNC_DATABASE_MIGRATIONS_DIR) or `TOUCHSYNC_MIGRATIONS_DIR`.
public enum EmbeddedMigrations {
    /// The environment variable naming a migrations directory to use instead of the embedded ones.
    public static let directoryEnvironmentVariable = "TOUCHSYNC_MIGRATIONS_DIR"

    /// The embedded migrations: SQLite's (`files`) and PostgreSQL's (`postgresFiles`); the one
    /// matching the database's dialect is applied.
    public static func migrator() throws -> Migrator {
        try Migrator(embedded: files, postgres: postgresFiles, earlierChecksums: earlierChecksums)
    }

    /// Checksums (SHA-256 of the whole file) of earlier texts of migrations whose comments were
    /// reworded since: databases that applied those texts ran the same statements, so they start
    /// as before. Keyed by file name (PostgreSQL's as `postgres/NAME`). A statement change is never
    /// listed here: it is a new migration.
    public static let earlierChecksums: [String: Set<String>] = [
        "0003_notification_pruning.sql": ["e297af169c45bf9522dd738713c44943d4998a0eca1420321e50055821cfe160"],
        "0004_token_version.sql": ["29bacc2d9c287e439240721f37782d1ad27a1509e3cc7c1434d83d1210b01725"],
        "0005_explicit_order_columns.sql": ["9bcad5c8face0c8dfe2b6a94d7cb3456e8fdb594ebd190df1b1b48464d914401"],
        "postgres/0002_explicit_order_columns.sql": ["35ce831dc7f66f200b9bdae630dce8cc0fbcbcf8c1cfd08aabe5064305668eaf"],
    ]

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
            return Migrator(directory: dir, earlierChecksums: earlierChecksums)
        }
        return try migrator()
    }
}
