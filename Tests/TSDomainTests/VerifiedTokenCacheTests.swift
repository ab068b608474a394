import TSCrypto
@testable import TSDomain
import XCTest

/// `VerifiedTokenCache` is bounded: at most `capacity` entries, the oldest evicted first.
final class VerifiedTokenCacheTests: XCTestCase {
    func claims(_ i: Int) -> JWTClaims { JWTClaims(sub: "user\(i)", iat: 0, exp: 100) }

    func testHoldsAtMostItsCapacityAndEvictsTheOldestFirst() {
        let cache = VerifiedTokenCache(capacity: 3)
        for i in 0..<3 { cache.insert("t\(i)", claims(i)) }
        XCTAssertEqual(cache.count, 3)
        cache.insert("t1", claims(1))
        XCTAssertEqual(cache.count, 3, "a token already held takes no second entry")
        cache.insert("t3", claims(3))
        XCTAssertEqual(cache.count, 3)
        XCTAssertNil(cache.claims(for: "t0"), "the oldest went first")
        XCTAssertEqual(cache.claims(for: "t1")?.sub, "user1")
        XCTAssertEqual(cache.claims(for: "t3")?.sub, "user3")
        for i in 4..<100 { cache.insert("t\(i)", claims(i)) }
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(Set((0..<100).filter { cache.claims(for: "t\($0)") != nil }), [97, 98, 99])
    }

    /// A hit still checks the times: `checkTimes` refuses what `verify` would refuse at that time.
    func testCachedClaimsStillExpire() throws {
        let token = JWT.sign(claims: JWTClaims(sub: "u", iat: 1_000, exp: 2_000), secret: Array("secret-secret-secret".utf8))
        let claims = try JWT.verify(token, secret: Array("secret-secret-secret".utf8), now: 1_500, clockSkewSeconds: 0)
        XCTAssertNoThrow(try JWT.checkTimes(claims, now: 1_999, clockSkewSeconds: 0))
        XCTAssertThrowsError(try JWT.checkTimes(claims, now: 2_000, clockSkewSeconds: 0))
        XCTAssertThrowsError(try JWT.verify(token, secret: Array("secret-secret-secret".utf8), now: 2_000, clockSkewSeconds: 0))
        XCTAssertThrowsError(try JWT.checkTimes(claims, now: 900, clockSkewSeconds: 0), "issued in the future")
        XCTAssertNoThrow(try JWT.checkTimes(claims, now: 2_050, clockSkewSeconds: 60), "the leeway applies alike")
    }
}
