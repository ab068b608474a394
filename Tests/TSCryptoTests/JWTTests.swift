import XCTest
import TSCrypto

final class JWTTests: XCTestCase {
    let secret = JWTForging.secret
    let now = JWTForging.now
    var claims: JWTClaims { JWTClaims(sub: "0f8fad5b-d9cb-469f-a165-70867728950e", iat: now, exp: now + 3600) }

    /// Builds a token with an arbitrary header/payload, signed with HMAC-SHA256 under `key`.
    func forge(header: String, payload: String, key: [UInt8]? = nil) -> String {
        JWTForging.forge(header: header, payload: payload, key: key ?? secret)
    }

    func payload(exp: Int64? = nil, iat: Int64? = nil) -> String {
        #"{"sub":"u1","iat":\#(iat ?? now),"exp":\#(exp ?? now + 60)}"#
    }

    func assertRejects(_ token: String, _ expected: JWTError? = nil, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let c = try JWT.verify(token, secret: secret, now: now)
            XCTFail("accepted \(token) as \(c)", file: file, line: line)
        } catch {
            if let expected { XCTAssertEqual(error, expected, file: file, line: line) }
        }
    }

    func testSignAndVerifyRoundTrip() throws {
        let token = JWT.sign(claims: claims, secret: secret)
        XCTAssertEqual(token.split(separator: ".").count, 3)
        XCTAssertFalse(token.contains("="))
        XCTAssertEqual(try JWT.verify(token, secret: secret, now: now + 10), claims)
    }

    /// The RFC 7519 §3.1 example token's shape (HS256), re-signed: another key order, an extra
    /// claim and whitespace-free JSON from another producer still verify.
    func testVerifiesAForeignTokenWithOtherHeaderOrder() throws {
        let token = forge(header: #"{"typ":"JWT","alg":"HS256"}"#, payload: #"{"exp":1700000100,"sub":"abc","iat":1700000000,"name":"x"}"#)
        XCTAssertEqual(try JWT.verify(token, secret: secret, now: now), JWTClaims(sub: "abc", iat: 1_700_000_000, exp: 1_700_000_100))
        // typ is optional.
        let noTyp = forge(header: #"{"alg":"HS256"}"#, payload: payload())
        XCTAssertEqual(try JWT.verify(noTyp, secret: secret, now: now).sub, "u1")
    }

    /// The jwt.io HS256 example (secret "your-256-bit-secret"): its signature is valid, so
    /// verification gets past the signature and stops at the missing `exp` claim.
    func testJWTIOExampleSignatureAccepted() {
        let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        XCTAssertThrowsError(try JWT.verify(token, secret: Array("your-256-bit-secret".utf8), now: now)) {
            XCTAssertEqual($0 as? JWTError, .invalidClaims("exp"))
        }
        XCTAssertThrowsError(try JWT.verify(token, secret: Array("your-256-bit-secreT".utf8), now: now)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
    }

    func testSignEscapesSubject() throws {
        let odd = JWTClaims(sub: "a\"b\\c\n\u{1}é", iat: now, exp: now + 1)
        XCTAssertEqual(try JWT.verify(JWT.sign(claims: odd, secret: secret), secret: secret, now: now), odd)
    }

    func testTamperedSignatureRejected() {
        let token = JWT.sign(claims: claims, secret: secret)
        var parts = token.split(separator: ".").map(String.init)
        var sig = Base64URL.decode(parts[2])!
        sig[0] ^= 1
        parts[2] = Base64URL.encode(sig)
        assertRejects(parts.joined(separator: "."), .invalidSignature)
        // Wrong secret.
        XCTAssertThrowsError(try JWT.verify(token, secret: Array("other".utf8), now: now)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        // Truncated signature.
        parts[2] = String(parts[2].dropLast(4))
        assertRejects(parts.joined(separator: "."))
    }

    func testTamperedPayloadRejected() {
        let token = JWT.sign(claims: claims, secret: secret)
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(#"{"sub":"someone-else","iat":\#(now),"exp":\#(now + 3600)}"#)
        assertRejects(parts.joined(separator: "."), .invalidSignature)
    }

    func testAlgNoneRejected() {
        let unsigned = Base64URL.encode(#"{"alg":"none","typ":"JWT"}"#) + "." + Base64URL.encode(payload()) + "."
        assertRejects(unsigned)
        // Even with a valid-looking HMAC attached.
        assertRejects(forge(header: #"{"alg":"none","typ":"JWT"}"#, payload: payload()), .unsupportedAlgorithm("none"))
        assertRejects(forge(header: #"{"alg":"None"}"#, payload: payload()), .unsupportedAlgorithm("None"))
    }

    func testOtherAlgorithmsRejected() {
        for alg in ["HS512", "HS384", "RS256", "ES256", "hs256", "HS256 ", "PS256"] {
            assertRejects(forge(header: #"{"alg":"\#(alg)","typ":"JWT"}"#, payload: payload()), .unsupportedAlgorithm(alg))
        }
        assertRejects(forge(header: #"{"typ":"JWT"}"#, payload: payload()), .unsupportedAlgorithm("(missing)"))
        assertRejects(forge(header: #"{"alg":null}"#, payload: payload()))
        assertRejects(forge(header: #"{"alg":["HS256"]}"#, payload: payload()))
        // Duplicate keys are refused outright (no "last one wins" games).
        assertRejects(forge(header: #"{"alg":"none","alg":"HS256"}"#, payload: payload()))
        assertRejects(forge(header: #"{"alg":"HS256","crit":["exp"]}"#, payload: payload()))
        assertRejects(forge(header: #"{"alg":"HS256","typ":"JOSE+JSON"}"#, payload: payload()))
    }

    func testExpiryAndIssuedAt() {
        // exp with the clock-skew leeway (default 60 s, RFC 7519 §4.1.4): expired once now >= exp + 60.
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now - 60, iat: now - 120)), .expired)
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now - 61, iat: now - 120)), .expired)
        XCTAssertNoThrow(try JWT.verify(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now - 59, iat: now - 120)), secret: secret, now: now))
        XCTAssertNoThrow(try JWT.verify(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now + 1)), secret: secret, now: now))
        // Without leeway: expired at exp exactly.
        let atExp = forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now, iat: now - 10))
        XCTAssertThrowsError(try JWT.verify(atExp, secret: secret, now: now, clockSkewSeconds: 0)) { XCTAssertEqual($0 as? JWTError, .expired) }
        XCTAssertNoThrow(try JWT.verify(atExp, secret: secret, now: now - 1, clockSkewSeconds: 0))
        // iat far in the future, or after exp.
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now + 7200, iat: now + 3600)), .issuedInFuture)
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now + 10, iat: now + 20)), .issuedInFuture)
        // Small skew tolerated.
        XCTAssertNoThrow(try JWT.verify(forge(header: #"{"alg":"HS256"}"#, payload: payload(exp: now + 100, iat: now + 5)), secret: secret, now: now))
    }

    func testMissingOrWrongTypedClaimsRejected() {
        for p in [#"{"iat":1700000000,"exp":1700000100}"#,
                  #"{"sub":"","iat":1700000000,"exp":1700000100}"#,
                  #"{"sub":5,"iat":1700000000,"exp":1700000100}"#,
                  #"{"sub":"u","iat":1700000000}"#,
                  #"{"sub":"u","iat":"1700000000","exp":1700000100}"#,
                  #"{"sub":"u","iat":1700000000,"exp":1700000100.5}"#,
                  #"["sub"]"#] {
            assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: p))
        }
    }

    func testMalformedTokensRejected() {
        let good = JWT.sign(claims: claims, secret: secret)
        let parts = good.split(separator: ".").map(String.init)
        for bad in ["", ".", "..", "a.b", "a.b.c.d", good + ".", "." + good,
                    parts[0] + ".." + parts[2], parts[0] + "." + parts[1] + ".",
                    parts[0] + "=." + parts[1] + "." + parts[2],
                    "!!!." + parts[1] + "." + parts[2],
                    Base64URL.encode("not json") + "." + parts[1] + "." + parts[2],
                    Base64URL.encode(#"{"alg":"HS256""#) + "." + parts[1] + "." + parts[2],
                    String(repeating: "a", count: 10_000)] {
            assertRejects(bad)
        }
        // A payload that is not JSON but correctly signed.
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: "{sub:1}"))
        assertRejects(forge(header: #"{"alg":"HS256"}"#, payload: payload() + "x"))
    }
}
