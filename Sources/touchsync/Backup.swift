import ArgumentParser
import Foundation
import TSApp
import TSStorage

/// `touchsync backup FILE`: a consistent copy of the SQLite database, taken while servers keep
/// serving it, checked with `PRAGMA integrity_check` (docs/backup.md).
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent, checked copy of the SQLite database (safe while servers run).",
        discussion: "FILE may be a directory: the copy is then named touchsync-<UTC time>.sqlite in it. With PostgreSQL it prints the pg_dump command to use instead.")

    @OptionGroup var common: CommonOptions

    @Argument(help: "The backup file to write (replaced if it exists), or a directory.")
    var file: String

    func run() async throws {
        let (_, path) = try sqliteDatabase(common, file: file, restore: false)
        do { print(try DatabaseBackup.backup(databasePath: path, to: file).text) } catch { throw Fatal.fail("backup failed: \(error)") }
    }
}

/// `touchsync restore FILE`: replaces the SQLite database with a backup, with every server stopped.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the SQLite database with a backup (refused while a server has it open).",
        discussion: "Checks the backup's integrity and that its migrations are ones this touchsync knows, keeps the current database as <database>.before-restore-<UTC time>, then swaps the files with one rename. With PostgreSQL it prints the pg_restore command to use instead.")

    @OptionGroup var common: CommonOptions

    @Argument(help: "The backup file (from touchsync backup or backup.directory).")
    var file: String

    func run() async throws {
        let (config, path) = try sqliteDatabase(common, file: file, restore: true)
        do {
            let migrator = try EmbeddedMigrations.migrator(configuration: config)
            print(try DatabaseBackup.restore(from: file, databasePath: path, migrator: migrator).text)
        } catch { throw Fatal.fail("restore refused: \(error)") }
    }
}

/// The configuration and the SQLite database file the options name; with PostgreSQL, exits 1 with
/// the `pg_dump` / `pg_restore` command to use instead.
private func sqliteDatabase(_ common: CommonOptions, file: String, restore: Bool) throws -> (AppConfiguration, String) {
    let config = try common.load(extra: ["log.level": "warning"])
    if let url = config[.databaseUrl], !url.isEmpty {
        throw Fatal.fail(DatabaseBackup.postgresAdvice(url: url, file: file, restore: restore))
    }
    return (config, config[.databasePath])
}
