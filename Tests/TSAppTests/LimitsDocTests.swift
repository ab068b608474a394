import Foundation
import TSJSON
import XCTest
@testable import TSApp

/// docs/limits.md lists every limit with its setting and its default, so an operator finds every bound in one place: every
/// numeric or duration setting is a limit except the few named here, and its row shows the
/// registry's default, so the page cannot drift from `Setting.all`.
final class LimitsDocTests: XCTestCase {
    /// Numeric settings that bound nothing (an address, a count of threads, a cost, a lifetime).
    static let notLimits: Set<String> = ["server.port", "server.eventLoops", "tls.redirectPort",
                                         "auth.passwordIterations", "auth.tokenLifetime"]

    func testEveryLimitSettingHasARowWithItsDefault() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/limits.md"), encoding: .utf8)
        var rows: [String: String] = [:]
        for line in doc.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1]
        }
        var checked = 0
        for s in Setting.all where [.int, .duration].contains(s.kind) && !Self.notLimits.contains(s.path) {
            checked += 1
            guard let shown = rows[s.path] else { XCTFail("docs/limits.md has no row for \(s.path)"); continue }
            let value = s.defaultValue.stringValue ?? s.defaultValue.serializedString()
            XCTAssertTrue(shown.hasPrefix("`\(value)`"), "docs/limits.md shows \(shown) as the default of \(s.path); the registry says \(value)")
        }
        XCTAssertGreaterThan(checked, 30)
        for path in rows.keys {
            XCTAssertTrue(Setting.all.contains { $0.path == path }, "docs/limits.md names \(path), which is no setting")
        }
    }
}
