import Foundation
import TSJSON
import XCTest
@testable import TSApp

/// The registry of typed keys is the only way settings are read: every key is registered and
/// documented, every default reads as its key's type, and no code outside
/// `Sources/TSApp/Configuration/` looks a setting up by its name. Each layer declares its keys
/// in its own `*+Settings.swift`, and lists them there for the registry (Setting.swift).
final class SettingsRegistryTests: XCTestCase {
    var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    /// A key declared but left out of `SettingKeys.registry` would never be loaded: it would
    /// silently read its default whatever the config file says.
    func testEveryDeclaredKeyIsRegisteredOnce() throws {
        let directory = root.appendingPathComponent("Sources/TSApp/Configuration")
        var declared: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let pattern = try NSRegularExpression(pattern: #"static let (\w+) = SettingKey<"#)
            for m in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                declared.append(String(text[Range(m.range(at: 1), in: text)!]))
            }
        }
        XCTAssertEqual(declared.count, Setting.all.count, "declared keys vs SettingKeys.registry")
        XCTAssertEqual(Set(Setting.all.map(\.path)).count, Setting.all.count, "a path is registered twice")
        let older = Setting.all.compactMap(\.integerForm).map(\.path).filter { Setting.named($0) == nil }
        XCTAssertEqual(Set(older).count, older.count, "an older name is claimed twice")
        XCTAssertTrue(Set(older).isDisjoint(with: Setting.all.map(\.path)), "an older name is also a setting")
    }

    /// A layer's file lists exactly the keys it declares, so the file shows what the layer reads
    /// and a key added there without its list entry fails here, naming the file.
    func testEachLayerListsTheKeysItDeclares() throws {
        let directory = root.appendingPathComponent("Sources/TSApp/Configuration")
        let declaration = try NSRegularExpression(pattern: #"static let (\w+) = SettingKey<"#)
        let list = try NSRegularExpression(pattern: #"static let \w+Keys: \[SettingKeys\] = \[([^\]]*)\]"#)
        var layers = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            let declared = declaration.matches(in: text, range: range).map { String(text[Range($0.range(at: 1), in: text)!]) }
            guard !declared.isEmpty else { continue }
            layers += 1
            let listed = list.matches(in: text, range: range).flatMap { m in
                text[Range(m.range(at: 1), in: text)!].split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                    .filter { !$0.isEmpty }.map { String($0.dropFirst()) }  // ".serverHost" → "serverHost"
            }
            XCTAssertEqual(listed, declared, "\(file): its keys list should name each key it declares, in the same order")
        }
        XCTAssertGreaterThan(layers, 10, "the layers' files were found")
    }

    /// `configuration[key]` falls back to the default only if the stored value has the wrong
    /// type, which `set` refuses; a default of the wrong type would stop the start instead.
    func testEveryDefaultIsAValueOfItsKind() throws {
        var config = AppConfiguration()
        for s in Setting.all {
            XCTAssertNoThrow(try config.set(s, s.defaultValue, source: "default"), s.path)
        }
        XCTAssertEqual(config[.serverMaxBodyBytes], 1_048_576)
        XCTAssertEqual(config[.serverIdleTimeout], .seconds(60))
        XCTAssertNil(config[.authJwtSecret])
        XCTAssertNil(config[.realtimeAllowedOrigins])
        XCTAssertEqual(config[.realtimeCorsAllowedOrigins], ["*"])
        XCTAssertFalse(config[.testMode])
    }

    /// Settings are read through typed keys only. The string lookups are gone from
    /// `AppConfiguration`; this also catches a reach into its raw `values` from elsewhere.
    func testNoSettingIsReadByNameOutsideTheRegistry() throws {
        let sources = root.appendingPathComponent("Sources")
        let registry = sources.appendingPathComponent("TSApp/Configuration").path + "/"
        let lookup = try NSRegularExpression(pattern: #"\.(values|sources)\[\s*""#
            + #"|\b(config|configuration|reader|settings)\.(int|string|optionalString|bool|duration|stringList|double|stringArray)\(\s*""#
            + #"|\.(int|string|optionalString|bool|duration|stringList)\(\s*"[a-z]+\.[a-zA-Z]"#)
        var offenders: [String] = []
        var scanned = 0
        let files = FileManager.default.enumerator(atPath: sources.path)
        while let relative = files?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let path = sources.appendingPathComponent(relative).path
            guard !path.hasPrefix(registry) else { continue }
            scanned += 1
            let text = try String(contentsOfFile: path, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if lookup.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                    offenders.append("Sources/\(relative):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertGreaterThan(scanned, 100, "the scan found the sources")
        XCTAssertEqual(offenders, [], "read these settings with their typed keys (configuration[.name], declared in the layer's *+Settings.swift)")
    }

    /// The README settings table names each duration's older name and variable, which are still read.
    func testReadmeDocumentsTheOlderNames() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let rows = readme.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for s in Setting.all {
            guard let older = s.integerForm else { continue }
            let row = rows.first { $0.hasPrefix("| `\(s.path)` |") }
            XCTAssertNotNil(row, "README has no row for \(s.path)")
            if older.path != s.path {
                XCTAssertTrue(row?.contains("`\(older.path)` (`\(older.environmentName)`)") == true, "README row of \(s.path) lacks \(older.path)")
            }
            XCTAssertTrue(row?.contains(older.unitName) == true, "README row of \(s.path) does not say its bare numbers are \(older.unitName)")
        }
    }
}
