import Foundation

// `embed-migrations MIGRATIONS_DIR OUTPUT`: writes the Swift source of `EmbeddedMigrations.files`
// (MIGRATIONS_DIR/*.sql, SQLite) and `.postgresFiles` (MIGRATIONS_DIR/postgres/*.sql, its own
// numbering) to OUTPUT. Run by the EmbedMigrations build-tool plugin, never by hand.
//
// Each file is embedded byte for byte (the checksum recorded in schema_migrations is the same
// whether a database was migrated from the files or from the binary) as a raw multi-line string
// literal. Files must be UTF-8 without carriage returns (a multi-line literal would turn CRLF
// into LF), and must not contain the literal's closing delimiter.

// A `@main` type rather than top-level code, so that the tool also builds where every module is
// compiled with `-parse-as-library` (the fuzzing build, fuzz/run.sh).
@main
enum EmbedMigrationsTool {
    static let delimiter = "####"

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("embed-migrations: \(message)\n".utf8))
        exit(1)
    }

    /// One `static let NAME: [(fileName: String, sql: String)]` of every `.sql` file in `dir`, in
    /// file-name order; `label` names the directory in the doc comment.
    static func embed(_ name: String, dir: String, label: String) -> String {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".sql") }.sorted()
        var out = "    /// (file name, exact contents) of every migration in \(label)/, in file-name order.\n"
        out += "    static let \(name): [(fileName: String, sql: String)] = [\n"
        for file in files {
            let path = dir + "/" + file
            guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
            guard let sql = String(data: data, encoding: .utf8) else { fail("\(path) is not UTF-8") }
            if sql.contains("\r") { fail("\(path) contains carriage returns") }
            if sql.contains("\"\"\"" + delimiter) { fail("\(path) contains the delimiter \"\"\"\(delimiter)") }
            // A multi-line literal ends before the newline that precedes its closing delimiter: the
            // one added here, so the file's own last line break (or its absence) is kept.
            out += "        (\"\(file)\", \(delimiter)\"\"\"\n\(sql)\n\"\"\"\(delimiter)),\n"
        }
        return out + "    ]\n"
    }

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else { fail("usage: embed-migrations MIGRATIONS_DIR OUTPUT") }
        let dir = arguments[1]
        let source = """
            // Generated at build time by the EmbedMigrations plugin (Plugins/EmbedMigrations) from
            // Migrations/*.sql and Migrations/postgres/*.sql.

            extension EmbeddedMigrations {
            \(embed("files", dir: dir, label: "Migrations"))
            \(embed("postgresFiles", dir: dir + "/postgres", label: "Migrations/postgres"))}

            """
        do { try Data(source.utf8).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic) } catch { fail("cannot write \(arguments[2]): \(error)") }
    }
}
