import Foundation
import TSAPNs
import TSDomain
import TSEngineIO
import TSHTTP
import TSJSON
import TSSocketIO
import TSStorage
import TSTLS
import XCTest
@testable import TSApp
@testable import TSRealtime

/// Every time setting is a `Duration` written with its unit ("30s", "250ms"); the older integer
/// names (`*Seconds`, `*Ms`, and `maxDisconnectionDuration` in milliseconds) are still read, from a
/// config file, a variable or a flag, and reach the component in the unit it counts.
final class DurationSettingsTests: XCTestCase {
    /// Each time setting, a value in its new form, and the same value as its older bare number.
    static let cases: [(key: SettingKey<Duration>, text: String, number: Int64, expected: Duration)] = [
        (.serverHeaderReadTimeout, "7s", 7, .seconds(7)),
        (.serverIdleTimeout, "2m", 120, .seconds(120)),
        (.serverShutdownGrace, "3s", 3, .seconds(3)),
        (.serverBodyReadTimeout, "45s", 45, .seconds(45)),
        (.serverOutboundStallTimeout, "9s", 9, .seconds(9)),
        (.tlsHandshakeTimeout, "4s", 4, .seconds(4)),
        (.tlsReloadCheckInterval, "5m", 300, .seconds(300)),
        (.databaseBusyTimeout, "1500ms", 1500, .milliseconds(1500)),
        (.authTokenLifetime, "12h", 43_200, .seconds(43_200)),
        (.authFailedLoginWindow, "2m", 120, .seconds(120)),
        (.authTokenLeeway, "30s", 30, .seconds(30)),
        (.realtimePingInterval, "400ms", 400, .milliseconds(400)),
        (.realtimePingTimeout, "2s", 2000, .seconds(2)),
        (.realtimeConnectionStateRecoveryMaxDisconnectionDuration, "2m", 120_000, .seconds(120)),
        (.apnsRetryBase, "250ms", 250, .milliseconds(250)),
        (.apnsRequestTimeout, "3s", 3000, .seconds(3)),
        (.apnsTokenRefresh, "50m", 3000, .seconds(3000)),
    ]

    func testEveryTimeSettingIsADurationWithAnOlderIntegerForm() {
        let timeNames = Setting.all.filter { s in ["Seconds", "Ms", "Timeout", "Interval", "Grace", "Lifetime", "Window", "Leeway", "Duration"]
            .contains { s.path.hasSuffix($0) } }
        for s in timeNames { XCTAssertEqual(s.kind, .duration, "\(s.path) is a time and should be a duration") }
        let withOlderForm = Set(Setting.all.filter { $0.integerForm != nil }.map(\.path))
        XCTAssertEqual(withOlderForm, Set(Self.cases.map(\.key.path)), "every time setting that was a number is tested here")
    }

    func testDefaultsAreTheOldDefaults() {
        let config = AppConfiguration()
        XCTAssertEqual(config[.serverHeaderReadTimeout], .seconds(10))
        XCTAssertEqual(config[.serverIdleTimeout], .seconds(60))
        XCTAssertEqual(config[.serverShutdownGrace], .seconds(10))
        XCTAssertEqual(config[.serverBodyReadTimeout], .seconds(30))
        XCTAssertEqual(config[.serverOutboundStallTimeout], .seconds(30))
        XCTAssertEqual(config[.tlsHandshakeTimeout], .seconds(10))
        XCTAssertEqual(config[.tlsReloadCheckInterval], .seconds(60))
        XCTAssertEqual(config[.databaseBusyTimeout], .milliseconds(5000))
        XCTAssertEqual(config[.authTokenLifetime], .seconds(2_592_000))
        XCTAssertEqual(config[.authFailedLoginWindow], .seconds(300))
        XCTAssertEqual(config[.authTokenLeeway], .seconds(60))
        XCTAssertEqual(config[.realtimePingInterval], .milliseconds(25_000))
        XCTAssertEqual(config[.realtimePingTimeout], .milliseconds(20_000))
        XCTAssertEqual(config[.realtimeConnectionStateRecoveryMaxDisconnectionDuration], .zero)
        XCTAssertEqual(config[.apnsRetryBase], .milliseconds(500))
        XCTAssertEqual(config[.apnsRequestTimeout], .milliseconds(10_000))
        XCTAssertEqual(config[.apnsTokenRefresh], .seconds(3000))
    }

    func testTheNewNameTakesADurationFromAFlagAVariableAndAFile() throws {
        for c in Self.cases {
            let path = c.key.path, env = c.key.setting.environmentName
            let flag = try AppConfiguration.load(configFile: nil, environment: [:], overrides: [path: .string(c.text)])
            XCTAssertEqual(flag[c.key], c.expected, "flag \(path)")
            let fromEnv = try AppConfiguration.load(configFile: nil, environment: [env: c.text], overrides: [:])
            XCTAssertEqual(fromEnv[c.key], c.expected, "env \(env)")
            XCTAssertEqual(fromEnv.sources[path], "env \(env)")
            let fromFile = try load(file: nested(path, .string(c.text)))
            XCTAssertEqual(fromFile[c.key], c.expected, "file \(path)")
        }
    }

    func testTheOlderNameTakesABareNumberInItsUnit() throws {
        for c in Self.cases {
            let older = try XCTUnwrap(c.key.setting.integerForm)
            let flag = try AppConfiguration.load(configFile: nil, environment: [:], overrides: [older.path: .int(c.number)])
            XCTAssertEqual(flag[c.key], c.expected, "flag \(older.path)")
            let fromEnv = try AppConfiguration.load(configFile: nil, environment: [older.environmentName: String(c.number)], overrides: [:])
            XCTAssertEqual(fromEnv[c.key], c.expected, "env \(older.environmentName)")
            XCTAssertEqual(fromEnv.sources[c.key.path], "env \(older.environmentName)")
            let fromFile = try load(file: nested(older.path, .int(c.number)))
            XCTAssertEqual(fromFile[c.key], c.expected, "file \(older.path)")
            // The older name also takes the new form.
            let text = try AppConfiguration.load(configFile: nil, environment: [:], overrides: [older.path: .string(c.text)])
            XCTAssertEqual(text[c.key], c.expected, "\(older.path) as text")
        }
        XCTAssertNil(Setting.unknownEnvironmentWarning(["TOUCHSYNC_SERVER_IDLE_TIMEOUT_SECONDS": "5", "TOUCHSYNC_REALTIME_PING_INTERVAL_MS": "400"]),
                     "the older variables set something")
    }

    func testBadValuesAreRefusedNamingTheSettingAsWritten() throws {
        for c in Self.cases {
            let older = try XCTUnwrap(c.key.setting.integerForm)
            let env = c.key.setting.environmentName
            XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [env: "soon"], overrides: [:])) { e in
                XCTAssertTrue("\(e)".contains(env) && "\(e)".contains("30s"), "\(e)")
            }
            XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [:], overrides: [older.path: -1])) { e in
                XCTAssertTrue("\(e)".contains(older.path) && "\(e)".contains("negative"), "\(e)")
            }
            XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [:], overrides: [older.path: "1.5s"])) { e in
                XCTAssertTrue("\(e)".contains(older.path) && "\(e)".contains(older.unitName), "\(e)")
            }
            guard older.path != c.key.path else { continue }
            // A bare number under the new name has no unit: refused rather than guessed.
            XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [:], overrides: [c.key.path: .int(c.number)])) { e in
                XCTAssertTrue("\(e)".contains(c.key.path) && "\(e)".contains("duration"), "\(e)")
            }
            XCTAssertThrowsError(try AppConfiguration.load(configFile: nil, environment: [env: String(c.number)], overrides: [:]))
        }
    }

    /// The configurations hold the durations as `Duration`s, clamped as before; only the code that
    /// arms a timer or makes a call converts them (Duration+Units.swift).
    func testTheConfigurationsHoldTheDurations() throws {
        let config = try AppConfiguration.load(configFile: nil, environment: ["TOUCHSYNC_SERVER_IDLE_TIMEOUT_SECONDS": "61"], overrides: [
            "server.headerReadTimeout": "1500ms", "server.shutdownGraceSeconds": 4, "server.bodyReadTimeout": "0s",
            "server.outboundStallTimeout": "250ms", "database.busyTimeoutMs": 1234, "realtime.pingInterval": "400ms",
            "realtime.pingTimeoutMs": 300, "realtime.connectionStateRecovery.maxDisconnectionDuration": "2m",
            "auth.tokenLifetime": "1d", "auth.failedLoginWindowSeconds": 90, "auth.tokenLeeway": "0s",
            "tls.handshakeTimeout": "0s", "tls.reloadCheckSeconds": 7, "notifications.retention": "2d",
            "apns.keyFile": "/k.p8", "apns.keyId": "K", "apns.teamId": "T", "apns.topic": "app", "apns.retryBaseMs": 0,
            "apns.requestTimeout": "3s", "apns.tokenRefreshSeconds": 1200,
            "realtime.redisUrl": "redis://127.0.0.1:1", "realtime.redis.connectTimeout": "0s", "realtime.redis.streamBlock": "250ms",
        ])
        let http = try HTTPServerConfiguration(reader: config)
        XCTAssertEqual(http.headerReadTimeout, .milliseconds(1500))
        XCTAssertEqual(http.idleTimeout, .seconds(61))
        XCTAssertEqual(http.shutdownGracePeriod, .seconds(4))
        XCTAssertEqual(http.bodyReadTimeout, .seconds(1), "at least a second, as before")
        XCTAssertEqual(http.outboundStallTimeout, .seconds(1), "at least a second, as before")
        XCTAssertEqual(try DatabaseConfiguration(reader: config).busyTimeout, .milliseconds(1234))
        let sio = SocketIOConfiguration(reader: config)
        XCTAssertEqual(sio.engine.pingInterval, .milliseconds(400))
        XCTAssertEqual(sio.engine.pingTimeout, .milliseconds(300))
        XCTAssertEqual(sio.engine.frameReadTimeout, .seconds(1))
        XCTAssertEqual(sio.recoveryMaxDisconnection, .seconds(120))
        let domain = DomainConfiguration(reader: config, jwtSecret: [1])
        XCTAssertEqual(domain.tokenLifetime, .seconds(86_400))
        XCTAssertEqual(domain.failedLoginWindow, .seconds(90))
        XCTAssertEqual(domain.tokenLeeway, .zero)
        let tls = TLSServerSetup.Configuration(reader: config)
        XCTAssertEqual(tls.handshakeTimeout, .seconds(1), "at least a second, as before")
        XCTAssertEqual(tls.reloadCheckInterval, .seconds(7))
        XCTAssertEqual(StorageMaintenance.Configuration(reader: config).retention.retention, .seconds(2 * 86_400))
        let apns = try XCTUnwrap(try APNsProvider.Settings(reader: config))
        XCTAssertEqual(apns.provider.retryBase, .milliseconds(1), "at least a millisecond, as before")
        XCTAssertEqual(apns.provider.requestTimeout, .seconds(3))
        XCTAssertEqual(apns.tokenRefresh, .seconds(1200))
        let redis = try XCTUnwrap(try RedisEventBridge.Settings(reader: config))
        XCTAssertEqual(redis.redis.connectTimeout, .seconds(5), "0s falls back to the default, as before")
        XCTAssertEqual(redis.transport, .stream(maxLength: 100_000, readCount: 100, block: .milliseconds(250)))
    }

    /// Where a duration meets a clock or a call: whole nanoseconds (never negative, saturating),
    /// milliseconds and seconds rounded toward zero.
    func testDurationConversions() {
        XCTAssertEqual(Duration.milliseconds(1500).clockNanoseconds, 1_500_000_000)
        XCTAssertEqual(Duration.seconds(-1).clockNanoseconds, 0)
        XCTAssertEqual(Duration.seconds(Int64.max).clockNanoseconds, .max)
        XCTAssertEqual(Duration.milliseconds(250).wholeMilliseconds, 250)
        XCTAssertEqual(Duration.seconds(Int64.max).wholeMilliseconds, .max)
        XCTAssertEqual(Duration.milliseconds(2500).wholeSeconds, 2)
    }

    private func nested(_ path: String, _ value: JSONValue) -> JSONValue {
        path.split(separator: ".").reversed().reduce(value) { inner, part in .object([String(part): inner]) }
    }

    private func load(file json: JSONValue) throws -> AppConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ts-durations-\(UUID().uuidString).json")
        try Data(json.serializedString().utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try AppConfiguration.load(configFile: file.path, environment: [:], overrides: [:])
    }
}
