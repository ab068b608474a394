import ArgumentParser
import Foundation
import TSApp
import TSJSON
import TSRoutes
import TSTestMode

/// `touchsync export FILE`: the whole dataset as one fixture document (docs/test-mode.md), what
/// `touchsync import` and `POST /api/test/fixtures` load back.
struct Export: FileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the whole dataset to FILE (- for standard output) as a fixture document.",
        discussion: "Users keep their password (its stored hash). See docs/test-mode.md, \"Export and import\".")
    static let fileHelp: ArgumentHelp = "The file to write, or - for standard output."

    @OptionGroup var options: FileCommandOptions<Export>

    func run() async throws {
        let server = try options.openServer()
        defer { server.db.close() }
        let doc = try await DatasetExporter.export(server.db)
        try options.writeFile(doc.serialized() + [0x0A])
        let counts = FixtureLoaderCounts.describe(doc)
        FileHandle.standardError.write(Data("touchsync: exported \(counts) from \(server.databasePath)\n".utf8))
    }
}

/// `touchsync import FILE`: loads a fixture document (an export, or any fixtures file) into the
/// database through the domain services. The database must have no users unless `--replace`
/// empties it first.
struct Import: FileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a fixture document (touchsync export's output, or any fixtures file) into the database.",
        discussion: "Refuses a database that already has users unless --replace, which empties every data table first.")
    static let fileHelp: ArgumentHelp = "The fixture document to load, or - for standard input."

    @OptionGroup var options: FileCommandOptions<Import>

    @Flag(help: "Empty every data table first (as POST /api/test/reset).")
    var replace = false

    func run() async throws {
        let data = try options.readFile()
        let doc: JSONValue
        do { doc = try JSONValue.parse([UInt8](data)) } catch { throw Fatal.fail("\(options.file) is not JSON: \(error)") }
        let server = try options.openServer()
        defer { server.db.close() }
        do {
            if replace {
                try await DatabaseReset.run(server.db)
            } else {
                let users = try await server.db.read { c in try c.scalarInt("SELECT COUNT(*) FROM users") } ?? 0
                guard users == 0 else {
                    throw Fatal.fail("\(server.databasePath) already has \(users) users: import into an empty database, or pass --replace")
                }
            }
            let result = try await FixtureLoader(domain: server.domain, hashes: PasswordHashCache()).load(doc)
            let counts = result.counts.pairs.map { "\($0.value.intValue ?? 0) \($0.key)" }.joined(separator: ", ")
            FileHandle.standardError.write(Data("touchsync: imported \(counts) into \(server.databasePath)\n".utf8))
        } catch let e as ExitCode {
            throw e
        } catch {
            throw Fatal.fail("import failed: \(error)")
        }
    }
}

enum FixtureLoaderCounts {
    static func describe(_ doc: JSONValue) -> String {
        ["users", "rooms", "elements", "reactions", "messages", "posts", "likes", "saves", "devices"]
            .map { "\(doc[$0]?.arrayValue?.count ?? 0) \($0)" }.joined(separator: ", ")
    }
}
