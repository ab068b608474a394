import ArgumentParser
import Foundation
import TSApp

/// A command whose one argument is a FILE it reads or writes (`backup`, `restore`, `export`,
/// `import`); what the file is, its help says.
protocol FileCommand: AsyncParsableCommand {
    static var fileHelp: ArgumentHelp { get }
}

/// The arguments of a `FileCommand`: the common options and FILE, and what these commands do
/// with them (`-` for standard input or output, the database they name).
struct FileCommandOptions<Command: FileCommand>: ParsableArguments {
    @OptionGroup var common: CommonOptions

    @Argument(help: Command.fileHelp)
    var file: String

    /// The configuration and the SQLite database file the options name; with PostgreSQL, exits 1
    /// with the `pg_dump` / `pg_restore` command to use instead.
    func sqliteDatabase(restore: Bool) throws -> (AppConfiguration, String) {
        let config = try common.load(extra: ["log.level": "warning"])
        if let url = config[.databaseUrl], !url.isEmpty {
            throw Fatal.fail(DatabaseBackup.postgresAdvice(url: url, file: file, restore: restore))
        }
        return (config, config[.databasePath])
    }

    /// The database the options name, opened as a tool (no listener; warnings only unless
    /// --log-level says otherwise). The caller closes `db`.
    func openServer() throws -> TouchSyncServer {
        let config = try common.load(extra: ["log.level": .string(common.logLevel ?? "warning")])
        do { return try TouchSyncServer(configuration: config, role: .tool) } catch { throw Fatal.fail("\(error)") }
    }

    /// FILE's contents, or standard input's for `-`.
    func readFile() throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let d = FileManager.default.contents(atPath: file) else { throw Fatal.fail("cannot read \(file)") }
        return d
    }

    /// Writes `bytes` to FILE (replacing it), or to standard output for `-`.
    func writeFile(_ bytes: [UInt8]) throws {
        if file == "-" {
            FileHandle.standardOutput.write(Data(bytes))
        } else {
            do { try Data(bytes).write(to: URL(fileURLWithPath: file)) } catch { throw Fatal.fail("cannot write \(file): \(error)") }
        }
    }
}
