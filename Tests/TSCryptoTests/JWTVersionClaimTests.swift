import XCTest
import TSCrypto

/// The private claim `ver` (RFC 7519 §4.3): the user's token version, compared with the
/// database at verification so that a logout revokes earlier tokens.
final class JWTVersionClaimTests: XCTestCase {
    let secret = JWTForging.secret
    let now = JWTForging.now

    func forge(_ payload: String) -> String { JWTForging.forge(payload: payload) }

    func payloadJSON(_ token: String) -> String {
        let parts = token.split(separator: ".")
        return parts.count == 3 ? String(decoding: Base64URL.decode(String(parts[1])) ?? [], as: UTF8.self) : ""
    }

    func testVersionRoundTripsAndIsOmittedWhileZero() throws {
        let v3 = JWT.sign(claims: JWTClaims(sub: "u1", iat: now, exp: now + 60, ver: 3), secret: secret)
        XCTAssertEqual(try JWT.verify(v3, secret: secret, now: now).ver, 3)
        XCTAssertTrue(payloadJSON(v3).contains(#""ver":3"#), payloadJSON(v3))
        let v0 = JWT.sign(claims: JWTClaims(sub: "u1", iat: now, exp: now + 60), secret: secret)
        XCTAssertFalse(payloadJSON(v0).contains("ver"), "a version-0 token is the same as before versions existed")
        XCTAssertEqual(try JWT.verify(v0, secret: secret, now: now).ver, 0)
    }

    func testNonIntegerVersionIsRejected() {
        for bad in [#""2""#, "1.5", "null", "true"] {
            let token = forge(#"{"sub":"u1","iat":\#(now),"exp":\#(now + 60),"ver":\#(bad)}"#)
            XCTAssertThrowsError(try JWT.verify(token, secret: secret, now: now), bad) { error in
                XCTAssertEqual(error as? JWTError, .invalidClaims("ver"), bad)
            }
        }
    }
}
