import TSApp
import XCTest

/// Environment variables spelled as people write them, and the one start-up warning that names
/// every `TOUCHSYNC_*` variable that sets nothing (Setting+Environment.swift).
extension ConfigurationTests {
    func testARunOfCapitalsIsOneWordInTheEnvironmentNameAndTheSpelledOutNameStillWorks() throws {
        XCTAssertEqual(Setting.named("realtime.allowEIO3")?.environmentName, "TOUCHSYNC_REALTIME_ALLOW_EIO3")
        XCTAssertEqual(Setting.named("realtime.globalEvents")?.environmentName, "TOUCHSYNC_REALTIME_GLOBAL_EVENTS")
        for name in ["TOUCHSYNC_REALTIME_ALLOW_EIO3", "TOUCHSYNC_REALTIME_ALLOW_E_I_O3"] {
            let config = try AppConfiguration.load(configFile: nil, environment: [name: "true"], overrides: [:])
            XCTAssertTrue(config[.realtimeAllowEIO3], name)
            XCTAssertEqual(config.sources["realtime.allowEIO3"], "env \(name)")
        }
        // Every setting's variable is unique, and no alias shadows another setting's.
        let names = Setting.all.map(\.environmentName)
        XCTAssertEqual(Set(names).count, names.count)
    }

    func testVariablesThatSetNothingAreNamedOnceWithTheClosestSetting() throws {
        let warning = try XCTUnwrap(Setting.unknownEnvironmentWarning([
            "TOUCHSYNC_REALTIME_ALLOW_EIO": "1", "TOUCHSYNC_LOG_LEVLE": "debug", "TOUCHSYNC_PORT": "1", "TOUCHSYNC_ENV": "production",
            "TOUCHSYNC_URL": "http://x", "TOUCHSYNC_TOKEN_ALICE": "t", "TOUCHSYNC_TEST_DATABASE": "postgres", "HOME": "/root",
        ]))
        XCTAssertTrue(warning.contains("TOUCHSYNC_LOG_LEVLE (did you mean TOUCHSYNC_LOG_LEVEL?), "
                                       + "TOUCHSYNC_REALTIME_ALLOW_EIO (did you mean TOUCHSYNC_REALTIME_ALLOW_EIO3?)"), warning)
        for known in ["TOUCHSYNC_PORT", "TOUCHSYNC_ENV", "TOUCHSYNC_URL", "TOUCHSYNC_TOKEN_ALICE", "TOUCHSYNC_TEST_DATABASE", "HOME"] {
            XCTAssertFalse(warning.contains(known + " ") || warning.contains(known + ","), known)
        }
        XCTAssertNil(Setting.unknownEnvironmentWarning(["TOUCHSYNC_REALTIME_ALLOW_E_I_O3": "1", "TOUCHSYNC_JWT_SECRET": "s"]))
    }
}
