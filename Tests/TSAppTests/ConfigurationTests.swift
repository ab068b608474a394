import Foundation
import TSApp
import TSJSON
import XCTest

/// Settings precedence and documentation.
final class ConfigurationTests: XCTestCase {
    var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    func testPrecedenceDefaultsFileEnvironmentFlags() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ts-config-\(UUID().uuidString).json")
        try Data(#"{"server": {"port": 4000, "host": "0.0.0.0"}, "realtime": {"globalEvents": "all"}, "log": {"level": "debug"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let config = try AppConfiguration.load(configFile: file.path,
                                               environment: ["TOUCHSYNC_PORT": "5000", "TOUCHSYNC_LOG_LEVEL": "warning",
                                                             "TOUCHSYNC_REALTIME_LEGACY_JOIN_EVENTS": "true", "UNRELATED": "x"],
                                               overrides: ["log.level": "error"])
        XCTAssertEqual(config[.serverMaxBodyBytes], 1_048_576, "default")
        XCTAssertEqual(config[.serverHost], "0.0.0.0", "file over default")
        XCTAssertEqual(config[.realtimeGlobalEvents], "all", "file")
        XCTAssertEqual(config[.serverPort], 5000, "environment over file")
        XCTAssertTrue(config[.realtimeLegacyJoinEvents], "generic TOUCHSYNC_* name")
        XCTAssertEqual(config[.logLevel], "error", "flag over environment")
        XCTAssertEqual(config.sources["server.port"], "env TOUCHSYNC_PORT")
    }

    func testBadValuesAreReportedWithTheirSource() {
        XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: ["TOUCHSYNC_PORT": "eighty"], overrides: [:])) { e in
            XCTAssertTrue("\(e)".contains("TOUCHSYNC_PORT"), "\(e)")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ts-config-\(UUID().uuidString).json")
        try? Data(#"{"server": {"prot": 1}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        XCTAssertThrowsError(try AppConfiguration.load(configFile: file.path, environment: [:], overrides: [:])) { e in
            XCTAssertTrue("\(e)".contains("server.prot"), "an unknown setting is named: \(e)")
            XCTAssertTrue("\(e)".contains("did you mean server.port?"), "with the setting it most likely meant: \(e)")
        }
        XCTAssertThrowsError(try AppConfiguration.load(configFile: "/nonexistent/x.json", environment: [:], overrides: [:]))
    }

    func testExampleFileHoldsEverySettingWithItsDefault() throws {
        let data = try Data(contentsOf: root.appendingPathComponent("config/touchsync.example.json"))
        let example = try JSONValue.parse([UInt8](data))
        let loaded = try AppConfiguration.load(configFile: root.appendingPathComponent("config/touchsync.example.json").path, environment: [:], overrides: [:])
        for s in Setting.all {
            var node: JSONValue? = example
            for part in s.path.split(separator: ".") { node = node?[String(part)] }
            XCTAssertNotNil(node, "config/touchsync.example.json lacks \(s.path)")
            XCTAssertEqual(node, s.defaultValue, "example value of \(s.path) differs from its default")
            XCTAssertEqual(loaded.values[s.path], s.defaultValue)
        }
    }

    func testReadmeDocumentsEverySetting() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        for s in Setting.all {
            XCTAssertTrue(readme.contains("`\(s.path)`") && readme.contains("`\(s.environmentName)`"), "README lacks \(s.path) / \(s.environmentName)")
        }
    }

    func testProductionWithoutSecretRefusesToStart() throws {
        let config = try AppConfiguration.load(configFile: nil, environment: [:],
                                               overrides: ["database.path": ":memory:", "server.port": 0])
        XCTAssertThrowsError(try TouchSyncServer(configuration: config, environment: ["TOUCHSYNC_ENV": "production"])) { e in
            XCTAssertTrue("\(e)".contains("TOUCHSYNC_JWT_SECRET"), "\(e)")
        }
    }

    func testGeneratedSecretIsStoredBesideTheDatabaseAndReused() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ts-secret-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dbPath = dir.appendingPathComponent("db.sqlite").path
        let config = try AppConfiguration.load(configFile: nil, environment: [:],
                                               overrides: ["database.path": .string(dbPath), "server.port": 0, "auth.passwordIterations": 1000])
        let first = try TouchSyncServer(configuration: config, environment: [:])
        let secretFile = dbPath + ".jwtsecret"
        let secret = try String(contentsOfFile: secretFile, encoding: .utf8)
        XCTAssertEqual(secret.count, 64)
        let attrs = try FileManager.default.attributesOfItem(atPath: secretFile)
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let user = try await first.domain.auth.createUser(username: "keeper", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let token = await first.domain.auth.issueToken(userId: user.id)
        await first.shutdown()
        // A restart reads the same secret, so tokens issued before it stay valid.
        let second = try TouchSyncServer(configuration: config, environment: [:])
        defer { second.db.close() }
        XCTAssertEqual(try String(contentsOfFile: secretFile, encoding: .utf8), secret)
        let authenticated = try await second.domain.auth.authenticate(token: token)
        XCTAssertEqual(authenticated.id, user.id)
    }

    /// The documented default limits (README settings table), as the HTTP server actually receives them from the settings.
    func testDefaultHTTPLimitsAreTheDocumentedValues() throws {
        let config = try AppConfiguration.load(configFile: nil, environment: [:],
                                               overrides: ["database.path": ":memory:", "server.port": 0, "auth.jwtSecret": "0123456789abcdef0123456789abcdef"])
        let server = try TouchSyncServer(configuration: config, environment: [:])
        defer { server.db.close() }
        let http = server.http.configuration
        XCTAssertEqual(http.maxRequestLineBytes, 8 * 1024, "request line 8 KiB (414)")
        XCTAssertEqual(http.maxHeaderBytes, 16 * 1024, "header bytes 16 KiB (431)")
        XCTAssertEqual(http.maxHeaderCount, 100, "100 header fields (431)")
        XCTAssertEqual(http.maxBodyBytes, 1024 * 1024, "body 1 MiB (413)")
        XCTAssertEqual(http.headerReadTimeout, .seconds(10), "header-read timeout 10 s")
        XCTAssertEqual(http.idleTimeout, .seconds(60), "idle keep-alive timeout 60 s")
        XCTAssertEqual(http.maxConnections, 10_000, "max connections 10,000 (503)")
    }
}
