import Foundation
import XCTest

/// The code of each storage engine stays in that engine's files: `#if canImport(CPostgres)` (code
/// that exists only where libpq is linked) may appear only in a file whose name says PostgreSQL
/// (`PostgresRow.swift`, `Database+Postgres.swift`, `…+Postgres.swift`). Anywhere else it would
/// put an engine branch back into engine-neutral code (a row accessor, the opening of a database,
/// a route), which is what `SQLBackend`, `Row` and the `Database+<Engine>.swift` files are for.
final class EngineFilesTests: XCTestCase {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static let pattern = #"canImport\(\s*CPostgres\s*\)"#

    /// True for a file allowed to hold PostgreSQL-only code: its name says so.
    static func isPostgresFile(_ name: String) -> Bool { name.contains("Postgres") }

    /// `file:line: text` for each use of the conditional in a file not named for PostgreSQL.
    static func violations(in text: String, file: String) throws -> [String] {
        let name = (file as NSString).lastPathComponent
        guard !isPostgresFile(name) else { return [] }
        let re = try NSRegularExpression(pattern: pattern)
        var found: [String] = []
        for (lineNo, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            if re.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                found.append("\(file):\(lineNo + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    func testPostgresConditionalsOnlyInPostgresFiles() throws {
        let fm = FileManager.default
        var scanned = 0
        var violations: [String] = []
        for top in ["Sources", "Tests"] {
            guard let walker = fm.enumerator(at: Self.root.appendingPathComponent(top), includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let rel = String(url.path.dropFirst(Self.root.path.count + 1))
                // This file names the pattern in its checks.
                if rel == "Tests/TSStorageTests/EngineFilesTests.swift" { continue }
                scanned += 1
                violations += try Self.violations(in: String(contentsOf: url, encoding: .utf8), file: rel)
            }
        }
        XCTAssertGreaterThan(scanned, 100, "the scan found the sources (root \(Self.root.path))")
        XCTAssertTrue(violations.isEmpty, "canImport(CPostgres) outside a PostgreSQL file (move that code into a `…+Postgres.swift` file):\n"
                      + violations.joined(separator: "\n"))
    }

    func testTheScanCatchesAViolation() throws {
        let text = "import CSQLite\n#if canImport(CPostgres)\nimport CPostgres\n#endif\n"
        XCTAssertEqual(try Self.violations(in: text, file: "Sources/TSStorage/Row.swift"),
                       ["Sources/TSStorage/Row.swift:2: #if canImport(CPostgres)"])
        XCTAssertEqual(try Self.violations(in: text, file: "Sources/TSStorage/Database+Postgres.swift"), [])
        XCTAssertEqual(try Self.violations(in: "// see #if canImport(CPostgres) in the Postgres files\n", file: "Sources/X.swift"), [],
                       "a comment that names it is not code")
    }
}
