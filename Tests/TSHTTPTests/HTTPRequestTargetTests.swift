import XCTest
@testable import TSHTTP

/// `HTTPRequest.splitTarget`'s byte scan (ASCII targets) must give exactly what the Character-based
/// reference split gives (RFC 9112 §3.2: origin-form and absolute-form; the fragment is dropped).
final class HTTPRequestTargetTests: XCTestCase {
    private func assertSame(_ target: String, file: StaticString = #filePath, line: UInt = #line) {
        let fast = HTTPRequest.splitTarget(target)
        let reference = HTTPRequest.splitTargetCharacters(target)
        XCTAssertEqual(fast.0, reference.0, "path of \(target.debugDescription)", file: file, line: line)
        XCTAssertEqual(fast.1, reference.1, "query of \(target.debugDescription)", file: file, line: line)
    }

    func testKnownTargets() {
        let cases: [(String, String, String?)] = [
            ("/api/rooms/r1/elements/e1/reactions/toggle", "/api/rooms/r1/elements/e1/reactions/toggle", nil),
            ("/a?b=c&d", "/a", "b=c&d"),
            ("/a?", "/a", ""),
            ("/a#frag?x", "/a", nil),
            ("/a?x#frag", "/a", "x"),
            ("http://example.com/p?q=1", "/p", "q=1"),
            ("http://example.com?q=1", "/", "q=1"),
            ("http://example.com", "/", nil),
            ("http://example.com#f", "/", nil),
            ("*", "*", nil),
            ("example.com:443", "example.com:443", nil),
            ("", "", nil),
            ("?x", "", "x"),
            ("a:/b?c", "a:/b", "c"),
        ]
        for (target, path, query) in cases {
            let split = HTTPRequest.splitTarget(target)
            XCTAssertEqual(split.0, path, target)
            XCTAssertEqual(split.1, query, target)
            assertSame(target)
        }
    }

    func testByteScanAgreesWithReferenceOnGeneratedTargets() {
        // Deterministic generator (no timing): targets built from the characters that matter.
        let alphabet = Array("/?#:ab.%=&+".utf8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        for _ in 0..<20_000 {
            let length = Int(next() % 14)
            var bytes: [UInt8] = []
            if next() % 3 == 0 { bytes.append(contentsOf: Array("http://".utf8)) }
            for _ in 0..<length { bytes.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            assertSame(String(decoding: bytes, as: UTF8.self))
        }
    }

    func testNonASCIITargetsUseTheReference() {
        for target in ["/caf\u{E9}?x=\u{E9}", "/#\u{301}a?b", "h\u{E9}://x/y?z"] {
            assertSame(target)
        }
    }
}
