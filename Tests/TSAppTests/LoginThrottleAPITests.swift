import Foundation
import TSJSON
import TSRoutes
import TSTestSupport
import XCTest

/// Skips, with the reason, where a client cannot take the other loopback addresses these tests use:
/// macOS's lo0 has only 127.0.0.1 until aliases are added. On Linux every 127/8 address binds.
private func requireLoopbackAliases(_ addresses: String...) throws {
    for address in addresses where !TestSockets.canBindSource(address) {
        throw XCTSkip("SKIPPED (needs another client address): cannot bind \(address) here (macOS's lo0 has only "
                      + "127.0.0.1; add it with `sudo ifconfig lo0 alias \(address) up`)")
    }
}

/// Over real sockets: login throttling per (username, client address), and per
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
        try requireLoopbackAliases("127.0.0.2")
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

    /// An office NAT: twelve made-up usernames from one address, then another user's correct
    /// password from that address, is served (it used to be 429 for the whole window).
    func testUnknownUsernamesFromOneAddressDoNotLockOutAnotherUser() async throws {
        try requireLoopbackAliases("127.0.0.3")
        _ = try await api.register("carol")
        for i in 0..<12 {
            XCTAssertEqual(login("ghost\(i)", "whatever-password", from: "127.0.0.3").status, 401)
        }
        let carol = login("carol", "password-123", from: "127.0.0.3")
        XCTAssertEqual(carol.status, 200, carol.text)
        XCTAssertEqual(login("ghost-next", "whatever-password", from: "127.0.0.3").status, 401, "a new name is a new pair")
    }

    /// Guessing one name is throttled per (name, address) whether the name exists or not: the
    /// same 401s, the same 429 at the same count, the same Retry-After, so the answers do not tell
    /// which usernames exist.
    func testUnknownAndKnownUsernamesGetTheSameAnswers() async throws {
        try requireLoopbackAliases("127.0.0.3")
        _ = try await api.register("dora")
        var answers: [String: [Int]] = [:]
        for name in ["dora", "nobody-here"] {
            answers[name] = (0..<11).map { login(name, "wrong-password-\($0)", from: "127.0.0.3").status }
        }
        XCTAssertEqual(answers["dora"], Array(repeating: 401, count: 10) + [429])
        XCTAssertEqual(answers["nobody-here"], answers["dora"])
        let known = login("dora", "x-password", from: "127.0.0.3"), unknown = login("nobody-here", "x-password", from: "127.0.0.3")
        // The same words; the seconds left may differ by one, as each pair's window began when its own
        // guesses did (a loaded machine spreads the two series over more than a second).
        func words(_ body: [UInt8]) throws -> String? {
            try JSONValue.parse(body)["error"]?["message"]?.stringValue.map { String($0.filter { !$0.isNumber }) }
        }
        XCTAssertEqual(try words(known.body), try words(unknown.body))
        let (k, u) = (Int(known.headers["retry-after"] ?? "") ?? -1, Int(unknown.headers["retry-after"] ?? "") ?? -1)
        XCTAssertTrue((250...300).contains(k) && (250...300).contains(u), "Retry-After \(k) / \(u)")
        // Dora's correct password from that address waits for her pair's window; from another it does not.
        XCTAssertEqual(login("dora", "password-123", from: "127.0.0.3").status, 429)
        XCTAssertEqual(login("dora", "password-123").status, 200)
    }
}

/// The per-address rate of failed logins (`auth.failedLoginsPerAddressPerMinute`): guessing across
/// many names from one address is held to the rate with a Retry-After of seconds (the next token),
/// never a window, and other addresses are not affected.
final class LoginAddressRateAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] {
        ["auth.maxFailedLogins": 10, "auth.failedLoginsPerAddressPerMinute": 30, "auth.failedLoginsPerAddressBurst": 20]
    }

    private func login(_ username: String, _ password: String, from address: String = "127.0.0.1") -> RawHTTP.Response {
        let body = JSONValue.object(["username": .string(username), "password": .string(password)]).serialized()
        return RawHTTP.request(port: live.port, "POST", "/api/auth/login", body: body,
                               headers: ["Content-Type": "application/json"], sourceAddress: address)
    }

    func testGuessingAcrossNamesIsARateNotALockOut() async throws {
        try requireLoopbackAliases("127.0.0.4")
        _ = try await api.register("erin")
        let statuses = (0..<25).map { login("spray\($0)", "password1", from: "127.0.0.4").status }
        XCTAssertEqual(Array(statuses.prefix(20)), Array(repeating: 401, count: 20), "the burst")
        XCTAssertTrue(statuses.suffix(5).allSatisfy { $0 == 429 }, "\(statuses)")
        let paced = login("spray-next", "password1", from: "127.0.0.4")
        XCTAssertEqual(paced.status, 429)
        XCTAssertEqual(try JSONValue.parse(paced.body)["error"]?["code"]?.stringValue, "RATE_LIMITED")
        let retry = try XCTUnwrap(Int(paced.headers["retry-after"] ?? ""), "Retry-After missing")
        XCTAssertTrue((1...2).contains(retry), "30 a minute: the next try in about 2 s, not a window (\(retry))")
        XCTAssertEqual(login("erin", "password-123").status, 200, "another address is not affected")
    }
}

extension LoginThrottleAPITests {
    /// Without `server.trustedProxies`, a client's own `X-Forwarded-For` is ignored: forging
    /// another address does not escape its throttle.
    func testForwardedForFromAnUntrustedPeerIsIgnored() async throws {
        _ = try await api.register("dave")
        for i in 0..<10 {
            XCTAssertEqual(forwardedLogin("dave", "wrong-\(i)", forwardedFor: "198.51.100.\(i)").status, 401)
        }
        XCTAssertEqual(forwardedLogin("dave", "password-123", forwardedFor: "203.0.113.9").status, 429,
                       "a forged X-Forwarded-For must not reset the throttle")
    }

    fileprivate func forwardedLogin(_ username: String, _ password: String, forwardedFor: String) -> RawHTTP.Response {
        let body = JSONValue.object(["username": .string(username), "password": .string(password)]).serialized()
        return RawHTTP.request(port: live.port, "POST", "/api/auth/login", body: body,
                               headers: ["Content-Type": "application/json", "X-Forwarded-For": forwardedFor])
    }
}

/// Scaling out: behind nginx every login comes from the proxy's address. With the proxy in
/// `server.trustedProxies`, the throttle counts the client named by `X-Forwarded-For` (the right-most
/// entry that is not a trusted proxy), so one client's failures lock out neither other clients nor
/// the same user elsewhere.
final class TrustedProxyLoginThrottleAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] {
        ["auth.maxFailedLogins": 10, "auth.failedLoginWindowSeconds": 300, "server.trustedProxies": ["127.0.0.1", "10.0.0.0/8"]]
    }

    private func login(_ username: String, _ password: String, forwardedFor: String?, from address: String = "127.0.0.1") -> RawHTTP.Response {
        let body = JSONValue.object(["username": .string(username), "password": .string(password)]).serialized()
        var headers = ["Content-Type": "application/json"]
        if let forwardedFor { headers["X-Forwarded-For"] = forwardedFor }
        return RawHTTP.request(port: live.port, "POST", "/api/auth/login", body: body, headers: headers, sourceAddress: address)
    }

    func testThrottleCountsTheForwardedClientBehindATrustedProxy() async throws {
        _ = try await api.register("erin")
        // Ten failures from client 198.51.100.7, through a second trusted hop (10.1.2.3).
        for i in 0..<10 {
            XCTAssertEqual(login("erin", "wrong-\(i)", forwardedFor: "192.0.2.1, 198.51.100.7, 10.1.2.3").status, 401)
        }
        // That client is throttled whatever it puts left of its address ...
        XCTAssertEqual(login("erin", "password-123", forwardedFor: "203.0.113.50, 198.51.100.7").status, 429)
        // ... but erin from another client behind the same proxy is not, and neither is the proxy itself.
        let elsewhere = login("erin", "password-123", forwardedFor: "198.51.100.8")
        XCTAssertEqual(elsewhere.status, 200, elsewhere.text)
        XCTAssertEqual(login("erin", "password-123", forwardedFor: nil).status, 200)
    }

    func testForwardedForFromAPeerOutsideTheListIsIgnored() async throws {
        try requireLoopbackAliases("127.0.0.2")
        _ = try await api.register("frank")
        // 127.0.0.2 is not a trusted proxy: its X-Forwarded-For is its own claim, ignored.
        for i in 0..<10 {
            XCTAssertEqual(login("frank", "wrong-\(i)", forwardedFor: "198.51.100.\(i)", from: "127.0.0.2").status, 401)
        }
        XCTAssertEqual(login("frank", "password-123", forwardedFor: "203.0.113.1", from: "127.0.0.2").status, 429)
        XCTAssertEqual(login("frank", "password-123", forwardedFor: nil).status, 200)
    }

    func testABrokenEntryStopsTheStartWithAClearError() throws {
        XCTAssertThrowsError(try TrustedProxies(["10.0.0.0/33"])) { XCTAssertTrue("\($0)".contains("10.0.0.0/33")) }
        XCTAssertThrowsError(try TrustedProxies(["nginx"]))
        XCTAssertThrowsError(try TrustedProxies(["256.1.1.1"]))
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8", "::1", "[fd00::1]"])
        XCTAssertTrue(proxies.contains("10.255.0.1"))
        XCTAssertFalse(proxies.contains("11.0.0.1"))
        XCTAssertTrue(proxies.contains("[::1]"))
        XCTAssertTrue(proxies.contains("FD00::1"))
        XCTAssertFalse(proxies.contains("127.0.0.2"))
    }
}
