import Foundation
import TSCrypto
import TSJSON
import XCTest

/// Over HTTP: a bearer token whose `nbf` is later than now plus the leeway
/// (`auth.tokenLeewaySeconds`) is refused with 401, and accepted once within it.
final class TokenNotBeforeAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    let secret = Array("test-secret-test-secret-test-secret".utf8)  // LiveServer's auth.jwtSecret

    func testNotBeforeIsHonouredWithTheLeeway() async throws {
        let user = try await api.register("notbefore")
        let now = Int64(Date().timeIntervalSince1970)
        func token(nbf: Int64) -> String { JWT.sign(claims: JWTClaims(sub: user.id, iat: now, exp: now + 3600, nbf: nbf), secret: secret) }

        let future = try await api.get("/api/auth/me", token: token(nbf: now + 600))
        XCTAssertEqual(future.status, 401)
        XCTAssertEqual(future.json["error"]?["code"]?.stringValue, "UNAUTHORIZED")
        // Within the 60 s leeway (as for exp), and in the past: accepted.
        let skewed = try await api.get("/api/auth/me", token: token(nbf: now + 30))
        XCTAssertEqual(skewed.status, 200)
        let past = try await api.get("/api/auth/me", token: token(nbf: now - 10))
        XCTAssertEqual(past.status, 200)
        XCTAssertEqual(past.json["data"]?["id"]?.stringValue, user.id)
    }

    func testTheLeewayIsASetting() async throws {
        await live.stop()
        live = try LiveServer(overrides: ["auth.tokenLeewaySeconds": 0])
        api = APIClient(base: live.base)
        let user = try await api.register("noleeway")
        let now = Int64(Date().timeIntervalSince1970)
        let ahead = JWT.sign(claims: JWTClaims(sub: user.id, iat: now, exp: now + 3600, nbf: now + 30), secret: secret)
        let r = try await api.get("/api/auth/me", token: ahead)
        XCTAssertEqual(r.status, 401)
    }
}
