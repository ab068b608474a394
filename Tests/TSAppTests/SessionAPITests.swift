import Foundation
import TSCrypto
import TSJSON
import XCTest

/// `POST /api/auth/refresh` and `POST /api/auth/logout` over real HTTP.
final class SessionAPITests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer()
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    func token(_ r: APIClient.Response) -> String? { r.json["data"]?["token"]?.stringValue }

    func claims(_ token: String) -> JSONValue {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return .null }
        return (try? JSONValue.parse(bytes)) ?? .null
    }

    func testRefreshReturnsAFreshTokenForAValidOne() async throws {
        let alice = try await api.register("alice")
        let r = try await api.post("/api/auth/refresh", token: alice.token)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let fresh = try XCTUnwrap(token(r))
        XCTAssertEqual(r.json["data"]?["user"]?["id"]?.stringValue, alice.id)
        XCTAssertEqual(claims(fresh)["sub"]?.stringValue, alice.id)
        XCTAssertNil(claims(fresh)["ver"], "version 0 is left out: tokens look as they did before logout existed")
        XCTAssertGreaterThanOrEqual(claims(fresh)["exp"]?.intValue ?? 0, claims(alice.token)["exp"]?.intValue ?? .max)
        let me = try await api.get("/api/auth/me", token: fresh)
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(me.json["data"]?["id"]?.stringValue, alice.id)
        // The old token stays valid until it expires or the user logs out.
        let s1 = try await api.get("/api/auth/me", token: alice.token).status
        XCTAssertEqual(s1, 200)
    }

    func testRefreshRefusesMissingForgedAndExpiredTokens() async throws {
        let alice = try await api.register("alice")
        let missing = try await api.post("/api/auth/refresh")
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.json["error"]?["code"], "UNAUTHORIZED")
        let s2 = try await api.post("/api/auth/refresh", token: alice.token + "x").status
        XCTAssertEqual(s2, 401)
        let expired = await live.server.domain.auth.issueToken(userId: alice.id, lifetimeSeconds: -10)
        let s3 = try await api.post("/api/auth/refresh", token: expired).status
        XCTAssertEqual(s3, 401)
    }

    func testLogoutRevokesEveryTokenOfTheCallerOnly() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let phoneLogin = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"])
        let phone = try XCTUnwrap(token(phoneLogin))
        let refresh = try await api.post("/api/auth/refresh", token: alice.token)
        let refreshed = try XCTUnwrap(token(refresh))

        let out = try await api.post("/api/auth/logout", token: phone)
        XCTAssertEqual(out.status, 200, String(decoding: out.body, as: UTF8.self))
        XCTAssertEqual(out.json["data"]?["userId"]?.stringValue, alice.id)
        XCTAssertEqual(out.json["data"]?["loggedOut"], true)

        for t in [alice.token, phone, refreshed] {
            let me = try await api.get("/api/auth/me", token: t)
            XCTAssertEqual(me.status, 401, "a token issued before the logout is revoked")
            XCTAssertEqual(me.json["error"]?["code"], "UNAUTHORIZED")
            let s4 = try await api.post("/api/auth/refresh", token: t).status
            XCTAssertEqual(s4, 401, "a revoked token cannot be refreshed")
        }
        let s5 = try await api.post("/api/auth/logout", token: alice.token).status
        XCTAssertEqual(s5, 401)
        let s6 = try await api.get("/api/auth/me", token: bob.token).status
        XCTAssertEqual(s6, 200, "another user's tokens are untouched")

        // Logging in again gives a token at the new version, and so does the CLI's issueToken.
        let login = try await api.post("/api/auth/login", ["username": "alice", "password": "password-123"])
        let again = try XCTUnwrap(token(login))
        XCTAssertEqual(claims(again)["ver"]?.intValue, 1)
        let s7 = try await api.get("/api/auth/me", token: again).status
        XCTAssertEqual(s7, 200)
        let cli = await live.server.domain.auth.issueToken(userId: alice.id)
        let s8 = try await api.get("/api/auth/me", token: cli).status
        XCTAssertEqual(s8, 200)
        let refreshedAgain = try await api.post("/api/auth/refresh", token: again)
        XCTAssertEqual(claims(try XCTUnwrap(token(refreshedAgain)))["ver"]?.intValue, 1)
    }

    /// A logout also ends the user's live sockets (they were authenticated with revoked tokens),
    /// and a revoked token cannot open a new one; other users' sockets stay.
    func testLogoutDisconnectsTheCallersSocketsAndRefusesRevokedTokens() async throws {
        let alice = try await api.register("alice")
        let bob = try await api.register("bob")
        let aliceSocket = try await PollingSocket.connect(base: live.base, token: alice.token)
        let bobSocket = try await PollingSocket.connect(base: live.base, token: bob.token)
        let out = try await api.post("/api/auth/logout", token: alice.token)
        XCTAssertEqual(out.status, 200)
        let packets = try await aliceSocket.receive(until: { $0 == "41" })
        XCTAssertTrue(packets.contains("41"), "Socket.IO DISCONNECT for the logged-out user's socket: \(packets)")
        do {
            _ = try await PollingSocket.connect(base: live.base, token: alice.token)
            XCTFail("a revoked token must not connect")
        } catch let e as PollingSocket.Failure {
            XCTAssertTrue(e.description.contains("unauthorized"), e.description)
        }
        // Bob's socket still works: its room:join ack comes back (an error ack for an unknown room).
        try await bobSocket.emit("room:join", ["roomId": "00000000-0000-4000-8000-000000000000"], ackId: 7)
        let acks = try await bobSocket.receive(until: { $0.hasPrefix("437") })
        XCTAssertTrue(acks.contains { $0.hasPrefix("437") }, "\(acks)")
    }

    func testSessionRoutesAreDocumented() async throws {
        let doc = try await api.get("/openapi.json").json
        XCTAssertEqual(doc["paths"]?["/api/auth/refresh"]?["post"]?["responses"]?["200"]?["content"]?["application/json"]?["schema"]?["properties"]?["data"]?["$ref"],
                       "#/components/schemas/Session")
        XCTAssertNotNil(doc["paths"]?["/api/auth/logout"]?["post"]?["responses"]?["401"])
        XCTAssertEqual(doc["paths"]?["/api/auth/logout"]?["post"]?["security"], [["bearerAuth": []]])
    }
}
