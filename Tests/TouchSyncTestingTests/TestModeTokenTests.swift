import Foundation
import TouchSyncTesting
import XCTest

/// A server with a test-mode token (`testModeToken`, as in a container or a CI service
/// container): the kit sends the token it finds in its environment, and without it the server
/// refuses every test route.
final class TestModeTokenTests: XCTestCase {
    func testTheKitSendsTheTokenFromItsEnvironment() async throws {
        let server = try TouchSyncServerProcess(environment: ["TOUCHSYNC_TEST_MODE_TOKEN": "kit-token-0123456789"])
        defer { server.stop() }
        let url = server.url.absoluteString
        do {
            _ = try await TouchSyncBackend.fromEnvironment(["TOUCHSYNC_URL": url])
            XCTFail("without the token the server must refuse the test routes")
        } catch let error as TouchSyncError {
            XCTAssertTrue("\(error)".contains("401") || "\(error)".contains("UNAUTHORIZED"), "\(error)")
        }
        let backend = try await TouchSyncBackend.fromEnvironment(["TOUCHSYNC_URL": url, "TOUCHSYNC_TEST_MODE_TOKEN": "kit-token-0123456789"])
        let world = try await backend.load(Fixtures().user("alice"))
        XCTAssertFalse(world.user("alice").token.isEmpty)
        try await backend.reset()
    }
}
