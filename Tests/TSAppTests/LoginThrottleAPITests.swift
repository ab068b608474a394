import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Issue 9 item 7 over real sockets: login throttling per (username, client address), and per
/// address for unknown usernames, so nobody can lock another user out by name. Other client
/// addresses are 127.0.0.2 and 127.0.0.3 (the client socket is bound to them; Linux routes 127/8).
final class LoginThrottleAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] { ["auth.maxFailedLogins": 10, "auth.failedLoginWindowSeconds": 300] }

    private func login(_ username: String, _ password: String, from address: String = "127.0.0.1") -> RawHTTP.Response {
        let body = JSONValue.object(["username": .string(username), "password": .string(password)]).serialized()
        return RawHTTP.request(port: live.port, "POST", "/api/auth/login", body: body,
                               headers: ["Content-Type": "application/json"], sourceAddress: address)
    }

    func testBobsFailuresLockOnlyBobFromThatAddress() async throws {
        _ = try await api.register("bob")
        _ = try await api.register("alice")
        for i in 0..<10 {
            XCTAssertEqual(login("bob", "wrong-password-\(i)").status, 401)
        }
        // Bob from the same address: refused for about the window, with Retry-After.
        let limited = login("bob", "password-123")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(try JSONValue.parse(limited.body)["error"]?["code"]?.stringValue, "RATE_LIMITED")
        let retry = try XCTUnwrap(Int(limited.headers["retry-after"] ?? ""), "Retry-After missing")
        XCTAssertTrue((250...300).contains(retry), "Retry-After \(retry)")
        // Alice, same address, right password: not refused for bob's failures.
        let alice = login("alice", "password-123")
        XCTAssertEqual(alice.status, 200, alice.text)
        XCTAssertNotNil(try JSONValue.parse(alice.body)["data"]?["token"]?.stringValue)
        // Bob from another address: not refused for failures made elsewhere.
        let bobElsewhere = login("bob", "password-123", from: "127.0.0.2")
        XCTAssertEqual(bobElsewhere.status, 200, bobElsewhere.text)
        // And a wrong password from there is a plain 401, counted for that pair only.
        XCTAssertEqual(login("bob", "still-wrong", from: "127.0.0.2").status, 401)
        XCTAssertEqual(login("bob", "password-123", from: "127.0.0.2").status, 200)
    }

    func testUnknownUsernamesAreThrottledPerAddress() async throws {
        _ = try await api.register("carol")
        for i in 0..<10 {
            XCTAssertEqual(login("ghost\(i)", "whatever-password", from: "127.0.0.3").status, 401)
        }
        // That address is now refused for every name (answering 401 for existing names only would
        // tell a prober which usernames exist) ...
        let probing = login("ghost-next", "whatever-password", from: "127.0.0.3")
        XCTAssertEqual(probing.status, 429)
        XCTAssertNotNil(probing.headers["retry-after"])
        XCTAssertEqual(login("carol", "password-123", from: "127.0.0.3").status, 429)
        // ... and no other address is.
        XCTAssertEqual(login("carol", "password-123").status, 200)
        XCTAssertEqual(login("ghost-next", "whatever-password", from: "127.0.0.2").status, 401)
    }
}
