import Foundation
import TSApp
import TSJSON
import XCTest

/// Who may use `/api/test/*` (TestModeAccess), over real sockets. A peer on another address is
/// conformance/test_network_trust.py's (a network namespace); here: the anti-CSRF header, a
/// foreign Origin, a foreign Host, and the token.
extension TestModeTests {
    func testAChangeWithoutTheHeaderOrFromAnotherSiteIsRefusedAndChangesNothing() async throws {
        _ = try await loadFixtures(["users": [["username": "alice", "password": "alice-password"]]])
        // What a page on another site can send without a preflight: a text/plain POST, no custom header.
        let simple = try await api.send("POST", "/api/test/reset", rawBody: Data("{}".utf8),
                                        headers: ["Content-Type": "text/plain", "Origin": "https://evil.example", "X-TouchSync-Test": ""])
        XCTAssertEqual(simple.status, 403, String(decoding: simple.body, as: UTF8.self))
        XCTAssertEqual(simple.json["error"]?["code"]?.stringValue, "FORBIDDEN")
        let noHeader = try await api.send("POST", "/api/test/reset", headers: ["X-TouchSync-Test": ""])
        XCTAssertEqual(noHeader.status, 403)
        XCTAssertTrue(String(decoding: noHeader.body, as: UTF8.self).contains("X-TouchSync-Test"))
        let crossSite = try await api.send("POST", "/api/test/reset", headers: ["Origin": "https://evil.example"])
        XCTAssertEqual(crossSite.status, 403, "the header does not excuse another site's Origin")
        let rebound = try await api.send("GET", "/api/test/events?since=0", headers: ["Host": "rebind.example"])
        XCTAssertEqual(rebound.status, 403, "a DNS-rebinding page names its own host")
        XCTAssertEqual(try tableCounts()["users"], 1, "nothing was reset")

        let read = try await api.send("GET", "/api/test/events?since=0")
        XCTAssertEqual(read.status, 200, "a read from this machine needs no header")
        let local = try await api.send("POST", "/api/test/reset", headers: ["Origin": "http://127.0.0.1:\(live.port)"])
        XCTAssertEqual(local.status, 200, "the server's own origin, with the header")
        XCTAssertEqual(try tableCounts()["users"], 0)
    }

    func testWithATokenEveryTestRouteNeedsIt() async throws {
        let tokened = try LiveServer(overrides: ["testMode": true, "testModeToken": "s3cret-s3cret"])
        let client = APIClient(base: tokened.base)
        let none = try await client.send("GET", "/api/test/events?since=0")
        XCTAssertEqual(none.status, 401, "reads need the token too")
        let wrong = try await client.send("POST", "/api/test/reset", headers: ["X-TouchSync-Test": "guess"])
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(wrong.json["error"]?["code"]?.stringValue, "UNAUTHORIZED")
        let right = try await client.send("POST", "/api/test/reset", headers: ["X-TouchSync-Test": "s3cret-s3cret"])
        XCTAssertEqual(right.status, 200, String(decoding: right.body, as: UTF8.self))
        await tokened.stop()
    }
}
