import Foundation
@testable import TSDomain
import TSJSON
import TSTestSupport
import XCTest

/// The cache of verified tokens (`VerifiedTokenCache`) over real sockets: after a token was
/// checked and kept, every revocation still refuses it at once, on the node that revoked it and on
/// another node of the same database, through both authentication paths (the pipeline's
/// `Authentication` step: `/api/auth/me`; the read paths' `wrapRead`: interaction-state).
/// There is no password-change or per-session revocation route: logout (every token of the user),
/// account deletion and expiry are the revocations there are.
final class VerifiedTokenCacheAPITests: XCTestCase {
    var directory: URL!
    var redis: RedisTestServer?

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("token-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        redis?.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Status of `GET /api/auth/me` and of interaction-state for `token` on `api`.
    func statuses(_ api: APIClient, _ token: String, post: String) async throws -> [Int] {
        let me = try await api.get("/api/auth/me", token: token).status
        let state = try await api.post("/api/mobile/posts/interaction-state", ["postIds": [.string(post)]], token: token).status
        return [me, state]
    }

    func makePost(_ api: APIClient, _ token: String) async throws -> String {
        let r = try await api.post("/api/mobile/posts", ["content": "hello"], token: token)
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        return try XCTUnwrap(r.json["data"]?["id"]?.stringValue)
    }

    /// Two nodes on one database with Redis between them (a SQLite file is served by one process
    /// alone otherwise; the PostgreSQL variant shares its database). Skips visibly without Redis.
    func twoNodes() throws -> (LiveServer, LiveServer) {
        let env = ProcessInfo.processInfo.environment
        var url = env["TOUCHSYNC_TEST_REDIS_URL"] ?? ""
        if url.isEmpty {
            if let why = RedisTestServer.unavailableReason {
                throw XCTSkip("SKIPPED (two nodes on one database): \(why); TOUCHSYNC_TEST_REDIS_URL is not set either")
            }
            let r = try RedisTestServer()
            redis = r
            url = r.url
        }
        let o: [String: JSONValue] = ["realtime.redisUrl": .string(url), "realtime.redis.channelPrefix": .string("tokens-\(UUID().uuidString.prefix(8))"),
                                      "database.path": .string(directory.appendingPathComponent("shared.sqlite").path)]
        let first = try LiveServer(overrides: o)
        do {
            return (first, try LiveServer(overrides: o, sharingDatabaseOf: first))
        } catch {
            Task { await first.stop() }
            throw error
        }
    }

    func cached(_ live: LiveServer, _ token: String) -> Bool { live.server.domain.auth.tokens.claims(for: token) != nil }

    func testLogoutRefusesACachedTokenOnEveryNode() async throws {
        let (a, b) = try twoNodes()
        let apiA = APIClient(base: a.base), apiB = APIClient(base: b.base)
        let alice = try await apiA.register("alice")
        let bob = try await apiA.register("bob")
        let post = try await makePost(apiA, alice.token)
        for api in [apiA, apiB] {
            for _ in 0..<2 {
                let s = try await statuses(api, alice.token, post: post)
                XCTAssertEqual(s, [200, 200])
            }
        }
        XCTAssertTrue(cached(a, alice.token) && cached(b, alice.token), "both nodes hold the token after its first use")

        let out = try await apiA.post("/api/auth/logout", token: alice.token)
        XCTAssertEqual(out.status, 200, String(decoding: out.body, as: UTF8.self))
        for api in [apiA, apiB] {
            let s = try await statuses(api, alice.token, post: post)
            XCTAssertEqual(s, [401, 401], "a logged-out token is refused at once, cached or not, on \(api.base)")
            let refresh = try await api.post("/api/auth/refresh", token: alice.token).status
            XCTAssertEqual(refresh, 401)
        }
        let bobStill = try await statuses(apiB, bob.token, post: post)
        XCTAssertEqual(bobStill, [200, 200], "another user's tokens are untouched")
        await b.stop()
        await a.stop()
    }

    func testAccountDeletionRefusesACachedTokenOnEveryNode() async throws {
        let (a, b) = try twoNodes()
        let apiA = APIClient(base: a.base), apiB = APIClient(base: b.base)
        let alice = try await apiA.register("alice")
        let bob = try await apiA.register("bob")
        let post = try await makePost(apiA, bob.token)
        for api in [apiA, apiB] {
            let s = try await statuses(api, alice.token, post: post)
            XCTAssertEqual(s, [200, 200])
        }
        XCTAssertTrue(cached(a, alice.token) && cached(b, alice.token))

        let deleted = try await apiB.send("DELETE", "/api/auth/me", json: ["password": "password-123"], token: alice.token)
        XCTAssertEqual(deleted.status, 200, String(decoding: deleted.body, as: UTF8.self))
        for api in [apiA, apiB] {
            let s = try await statuses(api, alice.token, post: post)
            XCTAssertEqual(s, [401, 401], "a deleted account's token is refused at once on \(api.base)")
        }
        await b.stop()
        await a.stop()
    }

    /// Test mode's movable clock: a cached token is checked against the clock on every use.
    func testExpiryOnTheTestClockRefusesACachedToken() async throws {
        let live = try LiveServer(overrides: ["testMode": true])
        let api = APIClient(base: live.base)
        let alice = try await api.register("alice")
        let post = try await makePost(api, alice.token)
        let before = try await statuses(api, alice.token, post: post)
        XCTAssertEqual(before, [200, 200])
        XCTAssertTrue(cached(live, alice.token))

        let moved = try await api.post("/api/test/clock", ["advance": "31d"])
        XCTAssertEqual(moved.status, 200, String(decoding: moved.body, as: UTF8.self))
        let after = try await statuses(api, alice.token, post: post)
        XCTAssertEqual(after, [401, 401], "a 30-day token is expired 31 days later, cached or not")
        // And back: the same cached token is valid again when the clock is (a fresh check would say so).
        let reset = try await api.post("/api/test/clock", ["reset": true])
        XCTAssertEqual(reset.status, 200)
        let again = try await statuses(api, alice.token, post: post)
        XCTAssertEqual(again, [200, 200])
        await live.stop()
    }

    /// A token that differs from a cached one in any byte is checked in full (and refused when forged).
    func testAForgedVariantOfACachedTokenIsRefused() async throws {
        let live = try LiveServer()
        let api = APIClient(base: live.base)
        let alice = try await api.register("alice")
        let ok = try await api.get("/api/auth/me", token: alice.token).status
        XCTAssertEqual(ok, 200)
        XCTAssertTrue(cached(live, alice.token))
        var bytes = Array(alice.token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let forged = String(decoding: bytes, as: UTF8.self)
        let refused = try await api.get("/api/auth/me", token: forged).status
        XCTAssertEqual(refused, 401)
        XCTAssertFalse(cached(live, forged), "a refused token is never kept")
        await live.stop()
    }
}
