import XCTest
@testable import TSSocketIO

/// Offsets are `<node prefix>-<counter>`; the prefix may itself hold a dash.
final class RecoveryOffsetTests: XCTestCase {
    func testAnOffsetSplitsAtItsLastDash() {
        XCTAssertEqual(SocketIORecoveryLog.parse(offset: "ab-d_EF-12")?.node, "ab-d_EF")
        XCTAssertEqual(SocketIORecoveryLog.parse(offset: "ab-d_EF-12")?.counter, 12)
        XCTAssertNil(SocketIORecoveryLog.parse(offset: "nodash"))
        XCTAssertNil(SocketIORecoveryLog.parse(offset: "x-"))
        XCTAssertNil(SocketIORecoveryLog.parse(offset: "-5"))
        XCTAssertNil(SocketIORecoveryLog.parse(offset: "x-1e3"))
    }
}
