import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Every write a client can make is bounded, over real sockets: posts (5,000 characters each, as
/// fast as one client can send them), likes and saves, seen and read markers, messages, device
/// registrations, with each limit's 429 `RATE_LIMITED` and `Retry-After`.
final class EveryWriteLimitAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] {
        ["limits.postInteractionsPerSecond": 1, "limits.postInteractionsBurst": 4,
         "limits.readMarkersPerSecond": 1, "limits.readMarkersBurst": 4,
         "limits.messagesPerSecond": 1, "limits.messagesBurst": 4,
         "limits.deviceRegistrationsPerSecond": 1, "limits.deviceRegistrationsBurst": 3]
    }

    /// The refusal is 429 with the code in its envelope (`mobile`: the posts' envelope) and a Retry-After of 1-2 s.
    func assertRateLimited(_ response: APIClient.Response?, noun: String, mobile: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try XCTUnwrap(response, "the limit never refused", file: file, line: line)
        let text = String(decoding: r.body, as: UTF8.self)
        XCTAssertEqual(r.status, 429, text, file: file, line: line)
        XCTAssertEqual((mobile ? r.json["code"] : r.json["error"]?["code"])?.stringValue, "RATE_LIMITED", text, file: file, line: line)
        XCTAssertTrue(text.contains(noun), text, file: file, line: line)
        let retry = try XCTUnwrap(Int(r.header("Retry-After") ?? ""), "Retry-After missing", file: file, line: line)
        XCTAssertTrue((1...2).contains(retry), "Retry-After \(retry)", file: file, line: line)
    }

    /// One client writing posts of 5,000 characters as fast as it can for 2 s: at most the burst
    /// (10) plus one a second is written, and the database holds exactly the posts answered 201.
    func testPostsOfFiveThousandCharactersAsFastAsPossibleAreBounded() async throws {
        let alice = try await api.register("alice")
        let body: JSONValue = ["content": .string(String(repeating: "x", count: 5_000))]
        let started = Date()
        var created = 0, refused = 0
        var lastRefusal: APIClient.Response?
        while Date().timeIntervalSince(started) < 2 {
            let r = try await api.post("/api/mobile/posts", body, token: alice.token)
            if r.status == 201 { created += 1 } else { refused += 1; lastRefusal = r }
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(created, 10, "the burst is served")
        XCTAssertLessThanOrEqual(Double(created), 10 + elapsed + 1, "\(created) posts in \(elapsed) s")
        XCTAssertGreaterThan(refused, 0)
        try assertRateLimited(lastRefusal, noun: "posts", mobile: true)
        let stored = try live.server.db.readSync { c in try c.scalarInt("SELECT COUNT(*) FROM posts") ?? -1 }
        XCTAssertEqual(stored, Int64(created), "a refused post writes nothing")
    }

    func testLikesAndSavesShareABudgetAndOthersKeepTheirs() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let created = try await api.post("/api/mobile/posts", ["content": "hello"], token: alice.token)
        let post = try XCTUnwrap(created.json["data"]?["id"]?.stringValue)
        var i = 0
        let (ok, refusal) = try await untilRefused {
            i += 1
            let path = "/api/mobile/posts/\(post)/\(i % 2 == 0 ? "like" : "save")"
            return i % 3 == 0 ? try await api.delete(path, token: bob.token) : try await api.post(path, token: bob.token)
        }
        XCTAssertGreaterThanOrEqual(ok, 4)
        try assertRateLimited(refusal, noun: "likes and saves", mobile: true)
        let aliceLike = try await api.post("/api/mobile/posts/\(post)/like", token: alice.token)
        XCTAssertEqual(aliceLike.status, 200, "alice has her own budget")
    }

    func testSeenAndReadMarkersShareABudget() async throws {
        let alice = try await api.register("alice")
        let made = try await api.post("/api/rooms", nil, token: alice.token)
        let room = try XCTUnwrap(made.json["data"]?["id"]?.stringValue)
        var i = 0
        let (ok, refusal) = try await untilRefused {
            i += 1
            return try await api.post("/api/rooms/\(room)/\(i % 2 == 0 ? "seen" : "messages/read")", token: alice.token)
        }
        XCTAssertGreaterThanOrEqual(ok, 4)
        try assertRateLimited(refusal, noun: "seen and read markers")
    }

    func testMessagesPastTheBurstGet429() async throws {
        let alice = try await api.register("alice")
        let made = try await api.post("/api/rooms", nil, token: alice.token)
        let room = try XCTUnwrap(made.json["data"]?["id"]?.stringValue)
        let (ok, refusal) = try await untilRefused { try await api.post("/api/rooms/\(room)/messages", ["text": "hi"], token: alice.token) }
        XCTAssertGreaterThanOrEqual(ok, 4)
        try assertRateLimited(refusal, noun: "messages")
        let stored = try live.server.db.readSync { c in try c.scalarInt("SELECT COUNT(*) FROM messages") ?? -1 }
        XCTAssertEqual(stored, Int64(ok))
    }

    func testDeviceRegistrationsPastTheBurstGet429() async throws {
        let alice = try await api.register("alice")
        var i = 0
        let (ok, refusal) = try await untilRefused {
            i += 1
            return try await api.post("/api/devices", ["token": .string("device-\(i)"), "platform": "ios"], token: alice.token)
        }
        XCTAssertGreaterThanOrEqual(ok, 3)
        try assertRateLimited(refusal, noun: "device registrations")
    }
}

/// The per-user cap on push tokens (`limits.maxDevicesPerUser`, default 20): 300 registrations
/// by one user keep that user's 20 newest; another user's devices are untouched. The rate limit is
/// off here so that only the cap is at work.
final class DeviceCapAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    override var serverOverrides: [String: JSONValue] { ["limits.deviceRegistrationsPerSecond": 0] }

    func testThreeHundredDevicesAreCappedToTheNewestTwenty() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let bobs = try await api.post("/api/devices", ["token": "bob-phone", "platform": "ios"], token: bob.token)
        XCTAssertEqual(bobs.status, 201)
        for i in 0..<300 {
            let r = try await api.post("/api/devices", ["token": .string("alice-device-\(i)"), "platform": "ios"], token: alice.token)
            XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        }
        let kept = try live.server.db.readSync { c in
            try c.rows("SELECT token FROM devices WHERE user_id = ? ORDER BY token", [.text(alice.id)]) { $0.string(0) }
        }
        XCTAssertEqual(Set(kept), Set((280..<300).map { "alice-device-\($0)" }), "the 20 most recently registered stay")
        let bobKept = try live.server.db.readSync { c in try c.scalarInt("SELECT COUNT(*) FROM devices WHERE user_id = ?", [.text(bob.id)]) ?? -1 }
        XCTAssertEqual(bobKept, 1)
    }
}

/// Sign-ups per client address (`limits.signUpsPerHour` 100, burst 50 by default): 131 accounts as
/// fast as one address can send them get at most the burst, the rest 429 with a Retry-After of
/// about 36 s (one an hour / 100); another address still signs up.
final class SignUpThrottleAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    func testOneAddressCannotCreateHundredsOfAccounts() async throws {
        var created = 0
        var refusal: APIClient.Response?
        let started = ContinuousClock.now
        for i in 0..<131 {
            let r = try await api.post("/api/auth/register", ["username": .string("bulk\(i)"), "password": "password-123"])
            if r.status == 201 { created += 1 } else { XCTAssertEqual(r.status, 429, String(decoding: r.body, as: UTF8.self)); refusal = r }
        }
        XCTAssertGreaterThanOrEqual(created, 50, "an office's burst of sign-ups is served")
        XCTAssertLessThanOrEqual(created, 51)
        let r = try XCTUnwrap(refusal)
        XCTAssertEqual(r.json["error"]?["code"]?.stringValue, "RATE_LIMITED")
        let retry = try XCTUnwrap(Int(r.header("Retry-After") ?? ""), "Retry-After missing")
        // 100 an hour is one sign-up every 36 s: the wait is what is left of the current 36 s, which
        // started when the burst began (a loaded machine takes longer over the 131 sign-ups).
        let elapsed = Int((ContinuousClock.now - started).components.seconds) + 1
        XCTAssertTrue((max(1, 35 - elapsed)...36).contains(retry), "Retry-After \(retry) after \(elapsed) s of sign-ups")
        let users = try live.server.db.readSync { c in try c.scalarInt("SELECT COUNT(*) FROM users") ?? -1 }
        XCTAssertEqual(users, Int64(created), "a refused sign-up creates nothing")
        // Another client address has its own budget.
        if TestSockets.canBindSource("127.0.0.2") {
            let body = JSONValue.object(["username": "elsewhere", "password": "password-123"]).serialized()
            let other = RawHTTP.request(port: live.port, "POST", "/api/auth/register", body: body,
                                        headers: ["Content-Type": "application/json"], sourceAddress: "127.0.0.2")
            XCTAssertEqual(other.status, 201, other.text)
        }
    }
}

/// Test mode: an app's set-up is a burst, so the write limits start off (600 elements as one user
/// are all accepted), a test turns them on with `POST /api/test/limits`, and a reset turns them off.
final class TestModeWriteLimitsAPITests: XCTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live?.stop() }

    func testSixHundredElementsAreAcceptedUntilATestTurnsLimitsOn() async throws {
        let (alice, _, room) = try await api.aliceAndBobInOneRoom()
        let note: JSONValue = ["type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10]
        for i in 0..<600 {
            let r = try await api.post("/api/rooms/\(room)/elements", note, token: alice)
            guard r.status == 201 else { return XCTFail("element \(i) refused: \(r.status) \(String(decoding: r.body, as: UTF8.self))") }
        }
        // Sign-ups too: many accounts from one address.
        for i in 0..<60 { _ = try await api.register("tm\(i)") }

        let on = try await api.post("/api/test/limits", ["enabled": true])
        XCTAssertEqual(on.status, 200, String(decoding: on.body, as: UTF8.self))
        XCTAssertEqual(on.json["data"]?["enabled"], true)
        // Posts have the smallest budget (10 in a row, then 1 a second): refused well before 40.
        var accepted = 0
        var refusal: APIClient.Response?
        for i in 0..<40 {
            let r = try await api.post("/api/mobile/posts", ["content": .string("post \(i)")], token: alice)
            if r.status == 429 { refusal = r; break }
            accepted += 1
        }
        XCTAssertGreaterThanOrEqual(accepted, 10, "every budget starts full")
        XCTAssertLessThan(accepted, 40, "the limits apply once turned on")
        XCTAssertNotNil(refusal?.header("Retry-After"))
        XCTAssertEqual(refusal?.json["code"]?.stringValue, "RATE_LIMITED")

        let reset = try await api.post("/api/test/reset")
        XCTAssertEqual(reset.status, 200)
        let (carol, _, room2) = try await api.aliceAndBobInOneRoom()
        for _ in 0..<350 {
            let r = try await api.post("/api/rooms/\(room2)/elements", note, token: carol)
            guard r.status == 201 else { return XCTFail("a reset must turn the limits off again: \(r.status)") }
        }
        let bad = try await api.post("/api/test/limits", ["enabled": "yes"])
        XCTAssertEqual(bad.status, 400, String(decoding: bad.body, as: UTF8.self))
    }
}
