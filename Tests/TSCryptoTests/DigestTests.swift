import XCTest
import TSCrypto

final class DigestTests: XCTestCase {
    // FIPS 180-2 Appendix A/B vectors.
    func testSHA1Vectors() {
        XCTAssertEqual(Hex.encode(SHA1.hash("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(Hex.encode(SHA1.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(Hex.encode(SHA1.hash([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    func testSHA256Vectors() {
        XCTAssertEqual(Hex.encode(SHA256.hash("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(SHA256.hexDigest([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// RFC 6455 §1.3: the Sec-WebSocket-Accept example.
    func testWebSocketAcceptExample() {
        let accept = Base64.encode(SHA1.hash("dGhlIHNhbXBsZSBub25jZQ==" + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
        XCTAssertEqual(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    // RFC 4231 §4.2, §4.3, §4.7.
    func testHMACSHA256RFC4231() {
        let case1 = HMAC.sha256(key: [UInt8](repeating: 0x0b, count: 20), message: "Hi There")
        XCTAssertEqual(Hex.encode(case1), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = HMAC.sha256(key: Array("Jefe".utf8), message: "what do ya want for nothing?")
        XCTAssertEqual(Hex.encode(case2), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let case6 = HMAC.sha256(key: [UInt8](repeating: 0xaa, count: 131),
                                message: "Test Using Larger Than Block-Size Key - Hash Key First")
        XCTAssertEqual(Hex.encode(case6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testHMACWithEmptyKeyAndMessage() {
        // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
        XCTAssertEqual(Hex.encode(HMAC.sha256(key: [], message: [UInt8]())),
                       "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2]))
        XCTAssertTrue(ConstantTime.equals([], []))
    }

    func testSecureRandomAndUUID() {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(SecureRandom.bytes(0), [])
        let hex = SecureRandom.hexString(bytes: 16)
        XCTAssertEqual(hex.count, 32)
        XCTAssertTrue(hex.allSatisfy { "0123456789abcdef".contains($0) })

        let uuid = UUIDGenerator.lowercaseV4()
        let parts = uuid.split(separator: "-").map(\.count)
        XCTAssertEqual(parts, [8, 4, 4, 4, 12])
        XCTAssertEqual(uuid, uuid.lowercased())
        XCTAssertEqual(Array(uuid)[14], "4")                       // version
        XCTAssertTrue("89ab".contains(Array(uuid)[19]))              // variant
        XCTAssertNotEqual(UUIDGenerator.lowercaseV4(), uuid)
    }

    func testHex() {
        XCTAssertEqual(Hex.encode([0x00, 0xff, 0x10]), "00ff10")
        XCTAssertEqual(Hex.decode("00FF10"), [0x00, 0xff, 0x10])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }
}
