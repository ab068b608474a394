import Foundation
import TSApp
import TSJSON
import TSSockets
import XCTest

/// `server.ioUring` reaches every event loop of a real server, and a value
/// other than auto/off is refused at start with the setting's name.
final class IORingSettingTests: XCTestCase {
    func testOffGivesEveryLoopTheSendPath() async throws {
        let live = try LiveServer(overrides: ["server.ioUring": "off"])
        let loops = try XCTUnwrap(live.server.http.eventLoopGroup?.loops)
        XCTAssertFalse(loops.isEmpty)
        XCTAssertTrue(loops.allSatisfy { !$0.usesIORing })
        await live.stop()
    }

    func testAutoUsesTheRingWhereTheKernelAllowsIt() async throws {
        let live = try LiveServer(overrides: ["server.ioUring": "auto"])
        let loops = try XCTUnwrap(live.server.http.eventLoopGroup?.loops)
        // Every loop checks on its own thread; they agree (same kernel, same process).
        XCTAssertEqual(Set(loops.map(\.usesIORing)).count, 1)
        if getenv(IORingMode.environmentVariable).map({ String(cString: $0) }) == "off" {
            XCTAssertEqual(loops.first?.usesIORing, false, "TOUCHSYNC_SERVER_IO_URING=off switches auto off")
        }
        await live.stop()
    }

    func testAnUnknownValueIsRefused() {
        XCTAssertThrowsError(try LiveServer(overrides: ["server.ioUring": "sometimes"])) { error in
            XCTAssertTrue("\(error)".contains("server.ioUring"), "\(error)")
        }
    }
}
