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
