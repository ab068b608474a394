import XCTest
@testable import TSCrypto

final class PasswordHasherTests: XCTestCase {
    // RFC 7914 §11 PBKDF2-HMAC-SHA256 vectors.
    func testPBKDF2KnownVectors() {
        XCTAssertEqual(Hex.encode(PasswordHasher.pbkdf2(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64)),
                       "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        XCTAssertEqual(Hex.encode(PasswordHasher.pbkdf2(password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80000, length: 64)),
                       "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
    }

    func testHashAndVerify() {
        let hasher = PasswordHasher(iterations: 1000)
        let encoded = hasher.hash(password: "correct horse battery staple")
        let parts = encoded.split(separator: "$")
        XCTAssertEqual(parts.count, 4)
        XCTAssertEqual(parts[0], "pbkdf2-sha256")
        XCTAssertEqual(parts[1], "1000")
        XCTAssertEqual(Base64.decode(String(parts[2]))?.count, 16)
        XCTAssertEqual(Base64.decode(String(parts[3]))?.count, 32)

        XCTAssertTrue(hasher.verify(password: "correct horse battery staple", encoded: encoded))
        XCTAssertFalse(hasher.verify(password: "correct horse battery stapler", encoded: encoded))
        XCTAssertFalse(hasher.verify(password: "", encoded: encoded))
        // Salted: the same password hashes differently.
        XCTAssertNotEqual(hasher.hash(password: "correct horse battery staple"), encoded)
        // Verification uses the encoded cost, not the hasher's.
        XCTAssertTrue(PasswordHasher(iterations: 5).verify(password: "correct horse battery staple", encoded: encoded))
        XCTAssertTrue(PasswordHasher(iterations: 5).needsRehash(encoded: encoded))
        XCTAssertFalse(hasher.needsRehash(encoded: encoded))
        XCTAssertFalse(hasher.verifyDummy(password: "x"))
    }

    func testVerifyRejectsMalformedEncodings() {
        let hasher = PasswordHasher(iterations: 10)
        let good = hasher.hash(password: "pw")
        XCTAssertTrue(hasher.verify(password: "pw", encoded: good))
        for bad in ["", "pw", "pbkdf2-sha256$10$abc", "bcrypt$10$AAAA$AAAA",
                    good.replacingOccurrences(of: "pbkdf2-sha256$10$", with: "pbkdf2-sha256$0$"),
                    good.replacingOccurrences(of: "pbkdf2-sha256$10$", with: "pbkdf2-sha256$99999999999$"),
                    good + "$extra", good.replacingOccurrences(of: "$", with: "$$")] {
            XCTAssertFalse(hasher.verify(password: "pw", encoded: bad), bad)
        }
    }

    func testDefaultCost() {
        XCTAssertEqual(PasswordHasher().iterations, 210_000)
    }
}
