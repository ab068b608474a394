import XCTest
import TSCrypto

/// RFC 7519 §4.1.5 `nbf`: a token is refused before its not-before time, with the
/// same clock-skew leeway as `exp`.
final class JWTNotBeforeTests: XCTestCase {
    let secret = JWTForging.secret
    let now = JWTForging.now

    func forge(_ payload: String) -> String { JWTForging.forge(payload: payload) }

    func token(nbf: String, iat: Int64? = nil, exp: Int64? = nil) -> String {
        forge(#"{"sub":"u1","iat":\#(iat ?? now - 10),"exp":\#(exp ?? now + 3600),"nbf":\#(nbf)}"#)
    }

    func verify(_ token: String, now: Int64? = nil, leeway: Int64 = JWT.defaultClockSkewSeconds) -> Result<JWTClaims, JWTError> {
        do { return .success(try JWT.verify(token, secret: secret, now: now ?? self.now, clockSkewSeconds: leeway)) } catch {
            return .failure(error)
        }
    }

    func testNotBeforeInTheFutureIsRefusedPastTheLeeway() {
        // Leeway 60 s (the default, as for exp): nbf up to now + 60 passes, now + 61 does not.
        XCTAssertEqual(verify(token(nbf: "\(now + 61)")), .failure(.notYetValid))
        XCTAssertEqual(verify(token(nbf: "\(now + 3000)")), .failure(.notYetValid))
        XCTAssertEqual(try verify(token(nbf: "\(now + 60)")).get().nbf, now + 60)
        XCTAssertEqual(try verify(token(nbf: "\(now)")).get().nbf, now)
        XCTAssertEqual(try verify(token(nbf: "\(now - 500)")).get().nbf, now - 500)
        // The same token becomes valid once the clock reaches nbf - leeway.
        let later = token(nbf: "\(now + 1000)")
        XCTAssertEqual(verify(later, now: now + 939), .failure(.notYetValid))
        XCTAssertNoThrow(try verify(later, now: now + 940).get())
    }

    func testLeewayIsTheSameForNotBeforeAndExpiry() {
        for leeway: Int64 in [0, 5, 60, 300] {
            // nbf exactly `leeway` ahead passes, one more second does not ...
            XCTAssertNoThrow(try verify(token(nbf: "\(now + leeway)"), leeway: leeway).get(), "leeway \(leeway)")
            XCTAssertEqual(verify(token(nbf: "\(now + leeway + 1)"), leeway: leeway), .failure(.notYetValid), "leeway \(leeway)")
            // ... and exp exactly `leeway` behind is expired, one second less is not.
            XCTAssertEqual(verify(token(nbf: "\(now - 1000)", iat: now - 2000, exp: now - leeway), leeway: leeway), .failure(.expired))
            XCTAssertNoThrow(try verify(token(nbf: "\(now - 1000)", iat: now - 2000, exp: now - leeway + 1), leeway: leeway).get())
        }
    }

    func testNotBeforeMustBeANumericDate() {
        for bad in [#""1700000000""#, "1700000000.5", "null", "true", "[1]"] {
            XCTAssertEqual(verify(token(nbf: bad)), .failure(.invalidClaims("nbf")), bad)
        }
        // An integral JSON number is a NumericDate (RFC 7519 §2).
        XCTAssertNoThrow(try verify(token(nbf: "1.7e9")).get())
    }

    func testSignWritesNotBeforeAndVerifyReturnsIt() throws {
        let claims = JWTClaims(sub: "u1", iat: now, exp: now + 3600, nbf: now + 120)
        let signed = JWT.sign(claims: claims, secret: secret)
        XCTAssertEqual(verify(signed), .failure(.notYetValid))
        XCTAssertEqual(try verify(signed, now: now + 60).get(), claims)
        // Without nbf, nothing changes for tokens this server issues.
        let plain = JWTClaims(sub: "u1", iat: now, exp: now + 3600)
        XCTAssertEqual(try verify(JWT.sign(claims: plain, secret: secret)).get(), plain)
        XCTAssertFalse(String(decoding: Base64URL.decode(String(JWT.sign(claims: plain, secret: secret).split(separator: ".")[1])) ?? [], as: UTF8.self).contains("nbf"))
    }
}
