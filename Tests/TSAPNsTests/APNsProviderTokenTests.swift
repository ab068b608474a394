import CCrypto
import TSCrypto
import TSJSON
import XCTest
@testable import TSAPNs

/// The APNs provider token: ES256 over header.claims with the .p8 key, cached and re-signed
/// after `refreshInterval` (the HTTP/2 exchange itself is tested in conformance/test_apns.py).
final class APNsProviderTokenTests: XCTestCase {
    /// A P-256 key made for these tests only (`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`).
    static let pem = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVuj4iEucr3gFoGkE
        cbR9vMUpuRXmmssHIwI6bto7LTChRANCAATutseYh4gbVrdD1rAoFAdBkzEJOeA7
        HiFCC+h7CH2jk8l8gpYY0i1wVymU0VfRX40FKlWrRU2nYEuUMBAiQsH+
        -----END PRIVATE KEY-----
        """

    func parts(_ jwt: String) throws -> (header: JSONValue, claims: JSONValue, input: [UInt8], signature: [UInt8]) {
        let p = jwt.split(separator: ".").map(String.init)
        XCTAssertEqual(p.count, 3)
        guard p.count == 3 else { throw XCTSkip("not a JWT") }
        return (try JSONValue.parse(try XCTUnwrap(Base64URL.decode(p[0]))), try JSONValue.parse(try XCTUnwrap(Base64URL.decode(p[1]))),
                Array((p[0] + "." + p[1]).utf8), try XCTUnwrap(Base64URL.decode(p[2])))
    }

    /// The key's public half checks the R‖S signature (conformance/test_apns.py also verifies the
    /// token with the openssl CLI, independently of this code).
    func verifies(_ token: APNsProviderToken, _ input: [UInt8], _ raw: [UInt8]) -> Bool {
        token.verifies(input, signature: raw)
    }

    override func setUpWithError() throws {
        if ts_es256_available() == 0 { throw XCTSkip("this build has no ES256 (no OpenSSL): APNs is unavailable") }
    }

    func testTokenIsAnES256JWTWithKidIssAndIatThatVerifies() throws {
        let token = try APNsProviderToken(pem: Self.pem, keyId: "ABC123DEFG", teamId: "TEAM123456")
        let jwt = try token.token(now: 1_800_000_000)
        let (header, claims, input, signature) = try parts(jwt)
        XCTAssertEqual(header, ["alg": "ES256", "kid": "ABC123DEFG"])
        XCTAssertEqual(claims, ["iss": "TEAM123456", "iat": 1_800_000_000])
        XCTAssertEqual(signature.count, 64, "R‖S, not DER")
        XCTAssertTrue(verifies(token, input, signature))
        var tampered = input
        tampered[tampered.count - 1] ^= 1
        XCTAssertFalse(verifies(token, tampered, signature), "the check can fail")
    }

    func testTokenIsReusedUntilRefreshThenSignedAnew() throws {
        let token = try APNsProviderToken(pem: Self.pem, keyId: "K", teamId: "T", refreshInterval: .seconds(3000))
        let first = try token.token(now: 1000)
        XCTAssertEqual(try token.token(now: 3999), first, "reused for 50 minutes")
        let second = try token.token(now: 4000)
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(try parts(second).claims["iat"], 4000)
        token.invalidate()
        XCTAssertEqual(try parts(try token.token(now: 4001)).claims["iat"], 4001, "invalidate() forces a new one (403 ExpiredProviderToken)")
    }

    func testNotAnECKeyIsRefused() {
        XCTAssertThrowsError(try APNsProviderToken(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", keyId: "K", teamId: "T"))
        XCTAssertThrowsError(try APNsProviderToken(pem: "not a key", keyId: "K", teamId: "T"))
    }
}
