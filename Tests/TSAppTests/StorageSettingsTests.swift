import Foundation
import TSApp
import TSJSON
import TSStorage
import XCTest

/// The storage settings (read queue, WAL bound, notification pruning): durations parse, bad ones are refused, and the
/// values reach the database.
final class StorageSettingsTests: XCTestCase {
    func testDurationsParse() {
        XCTAssertEqual(AppConfiguration.parseDuration("250ms"), .milliseconds(250))
        XCTAssertEqual(AppConfiguration.parseDuration("30s"), .seconds(30))
        XCTAssertEqual(AppConfiguration.parseDuration("5m"), .seconds(300))
        XCTAssertEqual(AppConfiguration.parseDuration("12h"), .seconds(43_200))
        XCTAssertEqual(AppConfiguration.parseDuration("30d"), .seconds(2_592_000))
        XCTAssertEqual(AppConfiguration.parseDuration("0s"), .zero)
        for bad in ["", "5", "s", "-5s", "1.5h", "5 m", "5w", "99999999999999999999d"] {
            XCTAssertNil(AppConfiguration.parseDuration(bad), bad)
        }
    }

    func testDurationSettingsAreValidatedAndLayered() throws {
        XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [:], overrides: ["notifications.retention": "a week"]))
        XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [:], overrides: ["notifications.retention": 30]))
        let fromEnv = try AppConfiguration.load(configFile: nil, environment: ["TOUCHSYNC_NOTIFICATIONS_RETENTION": "12h"], overrides: [:])
        XCTAssertEqual(fromEnv[.notificationsRetention], .seconds(43_200))
        XCTAssertEqual(AppConfiguration()[.notificationsPruneInterval], .seconds(300))
        XCTAssertEqual(AppConfiguration()[.databaseCheckpointInterval], .seconds(60))
    }

    func testStorageSettingsReachTheDatabase() throws {
        let dir = NSTemporaryDirectory() + "ts-settings-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try AppConfiguration.load(configFile: nil, environment: [:], overrides: [
            "database.path": .string(dir + "/db.sqlite"), "database.maxQueuedReads": 7, "database.journalSizeLimitBytes": 123_456,
            "database.walAutocheckpointPages": 321, "database.walMaxBytes": 2_345_678, "auth.jwtSecret": "test-secret-test-secret-test-secret",
        ])
        let server = try TouchSyncServer(configuration: config, environment: [:])
        defer { server.db.close() }
        XCTAssertEqual(server.db.configuration.maxQueuedReads, 7)
        XCTAssertEqual(try server.db.withWriterConnection { try $0.scalarInt("PRAGMA journal_size_limit") }, 123_456)
        XCTAssertEqual(server.db.configuration.walAutocheckpointPages, 321)
        XCTAssertEqual(server.db.configuration.walMaxBytes, 2_345_678)
        // The background checkpointer has the WAL: no checkpoint runs inside the writer's commits.
        XCTAssertEqual(try server.db.withWriterConnection { try $0.scalarInt("PRAGMA wal_autocheckpoint") }, 0)
        // Migrations/0003: the index the per-room cap uses.
        XCTAssertEqual(try server.db.readSync { try $0.scalarInt("SELECT COUNT(*) FROM sqlite_master WHERE name = 'room_notifications_by_room_seq'") }, 1)
    }
}
