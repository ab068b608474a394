import Foundation
@testable import TSDomain
import XCTest

final class TimestampTests: XCTestCase {
    func testFormatsAndParsesKnownInstants() {
        XCTAssertEqual(Timestamp.iso8601(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(Timestamp.iso8601(1_705_312_800), "2024-01-15T10:00:00Z")
        XCTAssertEqual(Timestamp.iso8601(951_825_599), "2000-02-29T11:59:59Z")
        XCTAssertEqual(Timestamp.iso8601(-1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(Timestamp.roomName(1_795_345_440), "Nov 22, 2026 11:04")
        XCTAssertEqual(Timestamp.parse("2024-01-15T10:00:00Z"), 1_705_312_800)
        XCTAssertNil(Timestamp.parse("2024-01-15T10:00:00.5Z"))
    }

    /// The arithmetic agrees with libc's gmtime_r over 400 years of days and every second of a day.
    func testAgreesWithGmtime() {
        var t: Int64 = -2_208_988_800  // 1900-01-01
        while t < 10_413_792_000 {      // 2300-01-01
            var tt = time_t(t + 45_296)  // 12:34:56
            var tmv = tm()
            gmtime_r(&tt, &tmv)
            let c = Timestamp.civil(t + 45_296)
            XCTAssertEqual([c.year, c.month, c.day, c.hour, c.minute, c.second],
                           [Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday), Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec)])
            t += 86_400 * 7 + 3_601
        }
    }
}
