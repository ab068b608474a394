import ArgumentParser
import Foundation
import TSApp
import TSStorage

/// `touchsync backup FILE`: a consistent copy of the SQLite database, taken while servers keep
/// serving it, checked with `PRAGMA integrity_check` (docs/backup.md).
struct Backup: FileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent, checked copy of the SQLite database (safe while servers run).",
        discussion: "FILE may be a directory: the copy is then named touchsync-<UTC time>.sqlite in it. With PostgreSQL it prints the pg_dump command to use instead.")
    static let fileHelp: ArgumentHelp = "The backup file to write (replaced if it exists), or a directory."

    @OptionGroup var options: FileCommandOptions<Backup>

    func run() async throws {
        let path = try options.sqliteDatabase(restore: false).1
        do { print(try DatabaseBackup.backup(databasePath: path, to: options.file).text) } catch { throw Fatal.fail("backup failed: \(error)") }
    }
}

/// `touchsync restore FILE`: replaces the SQLite database with a backup, with every server stopped.
struct Restore: FileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the SQLite database with a backup (refused while a server has it open).",
        discussion: "Checks the backup's integrity and that its migrations are ones this touchsync knows, keeps the current database as <database>.before-restore-<UTC time>, then swaps the files with one rename. With PostgreSQL it prints the pg_restore command to use instead.")
    static let fileHelp: ArgumentHelp = "The backup file (from touchsync backup or backup.directory)."

    @OptionGroup var options: FileCommandOptions<Restore>

    func run() async throws {
        let (config, path) = try options.sqliteDatabase(restore: true)
        do {
            let migrator = try EmbeddedMigrations.migrator(configuration: config)
            print(try DatabaseBackup.restore(from: options.file, databasePath: path, migrator: migrator).text)
        } catch { throw Fatal.fail("restore refused: \(error)") }
    }
}
