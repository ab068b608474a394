import Foundation
import PackagePlugin

/// Builds `EmbeddedMigrations.files` and `.postgresFiles` of TSApp from `Migrations/*.sql` and
/// `Migrations/postgres/*.sql` at every build (the `embed-migrations` tool writes the Swift), so
/// the binary carries exactly the files of the checkout: there is no generated copy to commit or
/// to let go stale.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let migrations = context.package.directoryURL.appendingPathComponent("Migrations")
        let postgres = migrations.appendingPathComponent("postgres")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedMigrations+Generated.swift")
        // The directories are inputs too, so that adding or removing a file rebuilds.
        let inputs = [migrations, postgres] + Self.sqlFiles(in: migrations) + Self.sqlFiles(in: postgres)
        return [
            .buildCommand(displayName: "Embedding Migrations/ into \(target.name)",
                          executable: try context.tool(named: "embed-migrations").url,
                          arguments: [migrations.path, output.path],
                          inputFiles: inputs, outputFiles: [output]),
        ]
    }

    static func sqlFiles(in dir: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".sql") }.sorted().map { dir.appendingPathComponent($0) }
    }
}
