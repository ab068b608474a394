import XCTest
import TSCrypto

final class Base64Tests: XCTestCase {
    // RFC 4648 §10 test vectors.
    let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    func testStandardVectors() {
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(plain), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8), encoded)
        }
    }

    func testStandardRejectsMalformed() {
        XCTAssertNil(Base64.decode("Zg"))        // missing padding
        XCTAssertNil(Base64.decode("Zg=a"))      // interior padding
        XCTAssertNil(Base64.decode("Z==="))      // too much padding
        XCTAssertNil(Base64.decode("Zh=="))      // non-zero pad bits
        XCTAssertNil(Base64.decode("Zm9v\n"))    // whitespace
        XCTAssertNil(Base64.decode("Zm-_"))      // url alphabet
    }

    func testURLVectorsAndAlphabet() {
        for (plain, encoded) in vectors {
            let unpadded = encoded.replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.encode(plain), unpadded)
            XCTAssertEqual(Base64URL.decode(unpadded), Array(plain.utf8))
        }
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        XCTAssertEqual(Base64.encode(bytes), "+/+/")
        XCTAssertEqual(Base64URL.encode(bytes), "-_-_")
        XCTAssertEqual(Base64URL.decode("-_-_"), bytes)
        XCTAssertNil(Base64URL.decode("+/+/"))
        XCTAssertNil(Base64URL.decode("Zg=="))   // padding not allowed
        XCTAssertNil(Base64URL.decode("Z"))      // impossible length
        XCTAssertNil(Base64URL.decode("Zh"))     // non-canonical
    }

    func testRoundTripAllLengths() {
        for n in 0..<70 {
            let bytes = SecureRandom.bytes(n)
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
        }
    }
}
