import TSRedis
import XCTest

final class RedisURLTests: XCTestCase {
    func testForms() throws {
        XCTAssertEqual(try RedisURL(parsing: "redis://127.0.0.1:6380"), RedisURL(host: "127.0.0.1", port: 6380))
        XCTAssertEqual(try RedisURL(parsing: "redis://redis"), RedisURL(host: "redis", port: 6379))
        XCTAssertEqual(try RedisURL(parsing: "redis://redis:6379/0"), RedisURL(host: "redis", port: 6379))
        XCTAssertEqual(try RedisURL(parsing: "redis://:s%40cret@h:1"), RedisURL(host: "h", port: 1, username: nil, password: "s@cret"))
        XCTAssertEqual(try RedisURL(parsing: "redis://app:pw@h"), RedisURL(host: "h", port: 6379, username: "app", password: "pw"))
        XCTAssertEqual(try RedisURL(parsing: "redis://[::1]:7000"), RedisURL(host: "::1", port: 7000))
    }

    func testRefusalsExplainAndHideThePassword() {
        for bad in ["http://h", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x", "redis://[::1"] {
            XCTAssertThrowsError(try RedisURL(parsing: bad), bad)
        }
        XCTAssertThrowsError(try RedisURL(parsing: "rediss://:topsecret@h:1")) { error in
            XCTAssertTrue("\(error)".contains("TLS"), "\(error)")
            XCTAssertFalse("\(error)".contains("topsecret"), "\(error)")
        }
        XCTAssertEqual((try? RedisURL(parsing: "redis://u:topsecret@h:2"))?.description, "redis://u:***@h:2")
    }
}

final class RedisBackoffTests: XCTestCase {
    func testDoublesFromMinimumUpToMaximumAndResets() {
        var b = RedisBackoff(minimum: .milliseconds(100), maximum: .milliseconds(1000))
        let delays = (0..<7).map { _ in b.nextDelay() }
        XCTAssertEqual(delays, [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                .milliseconds(1000), .milliseconds(1000), .milliseconds(1000)])
        b.reset()
        XCTAssertEqual(b.nextDelay(), .milliseconds(100))
    }
}
