import XCTest
@testable import TSHTTP

/// Response heads (HTTPResponseEncoder): a handler's header that would split the head (CR, LF or
/// NUL in its value, a name that is not a token, RFC 9110 §5.1 and §5.5) is left out, and every
/// other one is written as given, bridged and non-ASCII strings alike.
final class HTTPResponseEncoderTests: XCTestCase {
    func head(_ headers: [(String, String)]) -> String {
        var e = HTTPResponseEncoder()
        e.encode(.text("ok", headers: HTTPHeaders(headers)), requestID: "r1", keepAlive: true, http10: false, omitBody: true)
        return String(decoding: e.buffer, as: UTF8.self)
    }

    func testHeadersThatWouldSplitTheHeadAreLeftOut() {
        let text = head([("X-Good", "fine"), ("X-Evil", "a\r\nSet-Cookie: s=1"), ("X-Lf", "a\nb"), ("X-Nul", "a\u{0}b"),
                         ("Bad Name", "v"), ("X:Colon", "v"), ("", "empty name"), ("X-Café", "v"), ("X-Unicode", "café ✓")])
        XCTAssertTrue(text.contains("X-Good: fine\r\n"), text)
        XCTAssertTrue(text.contains("X-Unicode: café ✓\r\n"), "a value may carry UTF-8 (obs-text)")
        for gone in ["Set-Cookie", "X-Evil", "X-Lf", "X-Nul", "Bad Name", "X:Colon", "empty name", "X-Caf"] {
            XCTAssertFalse(text.contains(gone), "\(gone) in \(text)")
        }
        XCTAssertEqual(text.components(separatedBy: "\r\n\r\n").count, 2, "one end of head")
    }

    func testABridgedOrSubstringBackedHeaderIsCheckedTheSame() {
        let value = String("xx a\r\nb".dropFirst(3))
        let name = String(Substring("X-Name"))
        XCTAssertFalse(HTTPResponseEncoder.isSafeHeader(name, value))
        XCTAssertTrue(HTTPResponseEncoder.isSafeHeader(name, String("xx ok".dropFirst(3))))
        XCTAssertFalse(HTTPResponseEncoder.isSafeHeader("X\u{7F}", "v"), "DEL is not a token character")
    }
}

/// Generated request ids (X-Request-Id when the client sent none): 16 lowercase hex characters,
/// none repeated, also when many threads take them at once.
final class RequestIDTests: XCTestCase {
    func testIdsAreSixteenHexCharactersAndNeverRepeat() async {
        let perTask = 20_000
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<perTask).map { _ in RequestID.generate() } } }
            var all: [String] = []
            for await batch in group { all += batch }
            return all
        }
        XCTAssertEqual(ids.count, 4 * perTask)
        XCTAssertEqual(Set(ids).count, ids.count, "an id repeated")
        for id in ids.prefix(1000) {
            XCTAssertEqual(id.utf8.count, 16)
            XCTAssertTrue(id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, id)
        }
    }

    func testTheMixIsABijectionOnSamples() {
        // Distinct inputs, distinct outputs (each step of the mix is invertible); neighbours differ widely.
        let inputs: [UInt64] = (0..<10_000).map { UInt64($0) } + [.max, .max - 1, 1 << 63]
        XCTAssertEqual(Set(inputs.map(RequestID.mix)).count, inputs.count)
        XCTAssertGreaterThan((RequestID.mix(1) ^ RequestID.mix(2)).nonzeroBitCount, 16)
    }
}
