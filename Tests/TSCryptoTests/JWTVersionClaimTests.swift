import XCTest
import TSCrypto

/// The private claim `ver` (RFC 7519 §4.3): the user's token version, compared with the
/// database at verification so that a logout revokes earlier tokens.
final class JWTVersionClaimTests: XCTestCase {
    let secret = Array("test-secret-please-change".utf8)
    let now: Int64 = 1_700_000_000

    func forge(_ payload: String) -> String {
        let input = Base64URL.encode(#"{"alg":"HS256","typ":"JWT"}"#) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMAC.sha256(key: secret, message: Array(input.utf8)))
    }

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
