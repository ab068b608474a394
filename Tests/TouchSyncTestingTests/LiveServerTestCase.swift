import Foundation
import TouchSyncTesting
import XCTest

/// One `touchsync serve --test-mode` process per test class (started in the class's `setUp`,
/// stopped in its `tearDown`), and the backend an app's test would build from the environment.
class LiveServerTestCase: XCTestCase {
    nonisolated(unsafe) static var server: TouchSyncServerProcess?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        super.setUp()
        do { server = try TouchSyncServerProcess() } catch { startError = error }
    }

    override class func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// The server's URL, or the reason it did not start (a skip when the binary is missing).
    func serverURL() throws -> URL {
        if let e = Self.startError { throw e }
        return try XCTUnwrap(Self.server?.url, "no server")
    }

    /// As an app does it: the URL comes from the environment `touchsync exec` prepares.
    func makeBackend() async throws -> TouchSyncBackend {
        try await TouchSyncBackend.fromEnvironment(["TOUCHSYNC_URL": try serverURL().absoluteString])
    }
}
