/// Why migrating stopped. Each description names the file and says what to do.
public enum MigrationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The migrations directory does not exist or cannot be listed.
    case directoryNotFound(String)
    /// A `.sql` file whose name is not `NNNN_name.sql`.
    case invalidFileName(file: String)
    /// Two files share a version number.
    case duplicateVersion(version: Int, files: [String])
    /// A file could not be read or is not UTF-8.
    case unreadable(file: String, message: String)
    /// An already-applied migration's file was edited (its SHA-256 differs from the recorded one).
    case checksumMismatch(file: String)
    /// The migration's SQL failed; its transaction was rolled back entirely.
    case failed(file: String, message: String)

    public var description: String {
        switch self {
        case .directoryNotFound(let dir):
            return "Migrations directory \(dir) was not found. Pass --migrations <dir> or set TOUCHSYNC_MIGRATIONS_DIR."
        case .invalidFileName(let file):
            return "Migration file \(file) is not named NNNN_name.sql (e.g. 0004_add_devices.sql). Rename it."
        case .duplicateVersion(let version, let files):
            return "Migration files \(files.joined(separator: ", ")) share version \(version). Give each file its own number."
        case .unreadable(let file, let message):
            return "Migration file \(file) cannot be read: \(message)."
        case .checksumMismatch(let file):
            return "Migration \(file) was edited after it was applied to this database: its SHA-256 no longer matches "
                + "the checksum recorded in schema_migrations. Applied migrations must not change. Restore the file's "
                + "original content (e.g. `git checkout -- Migrations/\(file)`) and put the change in a new migration "
                + "file with a higher number."
        case .failed(let file, let message):
            return "Migration \(file) failed and was rolled back (nothing from it was applied): \(message). "
                + "Fix the file and run the migration again."
        }
    }
}
