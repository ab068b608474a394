@testable import TSCrypto
import TSJSON
import XCTest

/// The token check's shortcuts give the answers of the general way: the prepared HMAC key the
/// one-shot MAC, the compact payload reader the JSON parse, and `verify` under a key `verify`
/// under the secret.
final class JWTPreparedKeyTests: XCTestCase {
    let secret = Array("test-secret-please-change".utf8)
    let now: Int64 = 1_700_000_000

    /// RFC 4231 §4 keys and others around the 64-byte block (empty, shorter, equal, longer: hashed
    /// first), over messages of every length up to three blocks.
    func testPreparedKeyGivesTheOneShotMAC() {
        var keys: [[UInt8]] = [[], [0x0b], Array("Jefe".utf8), [UInt8](repeating: 0x0b, count: 20), [UInt8](repeating: 0xaa, count: 131)]
        for n in [63, 64, 65] { keys.append((0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }) }
        for key in keys {
            let prepared = HMAC.SHA256Key(key)
            for length in 0...200 {
                let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
                XCTAssertEqual(prepared.authenticate(message), HMAC.sha256(key: key, message: message), "key \(key.count) B, message \(length) B")
            }
        }
        // RFC 4231 §4.2 test case 1.
        XCTAssertEqual(Hex.encode(HMAC.SHA256Key([UInt8](repeating: 0x0b, count: 20)).authenticate(Array("Hi There".utf8))),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    /// Payloads the compact reader takes give the claims the JSON parse gives; payloads it leaves
    /// (other order, whitespace, escapes, leading zeros, long or negative or fractional numbers,
    /// other members) go to the parse, and every one of them verifies as before.
    func testCompactPayloadReaderAgreesWithTheParse() throws {
        let taken = [
            #"{"sub":"u1","iat":1699999990,"exp":1700000100}"#,
            #"{"sub":"0f8fad5b-d9cb-469f-a165-70867728950e","iat":0,"exp":1700000100,"nbf":1699999000}"#,
            #"{"sub":"a b/c:d","iat":1699999990,"exp":1700000100,"ver":3}"#,
            #"{"sub":"x","iat":1699999990,"exp":1700000100,"nbf":5,"ver":123456789012345678}"#,
        ]
        let left = [
            #"{"iat":1699999990,"sub":"u1","exp":1700000100}"#,
            #"{ "sub":"u1","iat":1699999990,"exp":1700000100}"#,
            #"{"sub":"u\u0031","iat":1699999990,"exp":1700000100}"#,
            #"{"sub":"Zoë","iat":1699999990,"exp":1700000100}"#,
            #"{"sub":"u1","iat":01699999990,"exp":1700000100}"#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100,"ver":1234567890123456789}"#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100.0}"#,
            #"{"sub":"u1","iat":-1,"exp":1700000100}"#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100,"name":"x"}"#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100,"ver":"2"}"#,
            #"{"sub":"","iat":1699999990,"exp":1700000100}"#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100}  "#,
            #"{"sub":"u1","iat":1699999990,"exp":1700000100,"ver":1,"nbf":2}"#,
        ]
        for payload in taken {
            let bytes = Array(payload.utf8)
            let compact = try XCTUnwrap(JWT.DecodedClaims(compact: bytes), payload)
            guard case .success(let parsed) = JWT.DecodedClaims.parse(bytes) else { return XCTFail(payload) }
            XCTAssertEqual(compact.claims, parsed.claims, payload)
            XCTAssertTrue(compact.verIsValid && parsed.verIsValid, payload)
        }
        for payload in left {
            XCTAssertNil(JWT.DecodedClaims(compact: Array(payload.utf8)), payload)
        }
        for payload in taken + left {
            let token = forge(payload: payload)
            let underSecret = Result { try JWT.verify(token, secret: secret, now: now) }
            let underKey = Result { try JWT.verify(token, key: HMAC.SHA256Key(secret), now: now) }
            XCTAssertEqual(String(describing: underSecret), String(describing: underKey), payload)
        }
        XCTAssertEqual(try JWT.verify(forge(payload: taken[2]), key: HMAC.SHA256Key(secret), now: now),
                       JWTClaims(sub: "a b/c:d", iat: 1_699_999_990, exp: 1_700_000_100, ver: 3))
        XCTAssertThrowsError(try JWT.verify(forge(payload: left[9]), key: HMAC.SHA256Key(secret), now: now)) {
            XCTAssertEqual($0 as? JWTError, .invalidClaims("ver"))
        }
    }

    /// The header this server signs is recognised by its bytes; any other header, including one
    /// that decodes to the same JSON, is checked by decoding it, with the same outcome.
    func testOwnHeaderAndForeignHeadersVerifyAlike() throws {
        let claims = JWTClaims(sub: "u1", iat: now - 10, exp: now + 60, ver: 2)
        let token = JWT.sign(claims: claims, secret: secret)
        XCTAssertTrue(token.hasPrefix(JWT.headerSegment + "."))
        XCTAssertEqual(try JWT.verify(token, key: HMAC.SHA256Key(secret), now: now), claims)
        let payload = #"{"sub":"u1","iat":\#(now - 10),"exp":\#(now + 60),"ver":2}"#
        XCTAssertEqual(try JWT.verify(forge(header: #"{"typ":"JWT","alg":"HS256"}"#, payload: payload), key: HMAC.SHA256Key(secret), now: now), claims)
        XCTAssertThrowsError(try JWT.verify(forge(header: #"{"alg":"HS512","typ":"JWT"}"#, payload: payload), key: HMAC.SHA256Key(secret), now: now)) {
            XCTAssertEqual($0 as? JWTError, .unsupportedAlgorithm("HS512"))
        }
        XCTAssertThrowsError(try JWT.verify(token, key: HMAC.SHA256Key(Array("another".utf8)), now: now)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
    }

    func forge(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMAC.sha256(key: secret, message: Array(input.utf8)))
    }
}
