import XCTest
@testable import TSWebSocket

final class WebSocketHandshakeTests: XCTestCase {
    private let valid: [String: String] = [
        "upgrade": "websocket", "connection": "Upgrade",
        "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    ]

    private func check(
        _ headers: [String: String], method: String = "GET", configuration: WebSocketConfiguration = .default
    ) -> Result<String, WebSocketHandshake.Rejection> {
        WebSocketHandshake.validate(method: method, header: { headers[$0.lowercased()] }, configuration: configuration)
    }

    private func with(_ name: String, _ value: String?) -> [String: String] {
        var h = valid
        h[name] = value
        return h
    }

    func testRFCSampleAcceptValue() {
        // RFC 6455 §1.3 (the RFC's value; independently checked with Python hashlib+base64).
        XCTAssertEqual(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    func testValidRequestAndTokenLists() {
        XCTAssertEqual(check(valid), .success("dGhlIHNhbXBsZSBub25jZQ=="))
        XCTAssertEqual(check(with("connection", "keep-alive, Upgrade")), .success("dGhlIHNhbXBsZSBub25jZQ=="))
        XCTAssertEqual(check(with("upgrade", "WebSocket")), .success("dGhlIHNhbXBsZSBub25jZQ=="))
        XCTAssertEqual(check(with("sec-websocket-key", "  dGhlIHNhbXBsZSBub25jZQ== ")), .success("dGhlIHNhbXBsZSBub25jZQ=="))
    }

    func testBadRequests() {
        XCTAssertEqual(check(valid, method: "POST"), .failure(.methodNotAllowed))
        XCTAssertEqual(check(with("upgrade", nil)), .failure(.missingUpgrade))
        XCTAssertEqual(check(with("upgrade", "h2c")), .failure(.missingUpgrade))
        XCTAssertEqual(check(with("connection", nil)), .failure(.missingConnectionUpgrade))
        XCTAssertEqual(check(with("connection", "keep-alive")), .failure(.missingConnectionUpgrade))
        XCTAssertEqual(check(with("sec-websocket-key", nil)), .failure(.invalidKey))
        XCTAssertEqual(check(with("sec-websocket-key", "c2hvcnQ=")), .failure(.invalidKey))        // 5 bytes
        XCTAssertEqual(check(with("sec-websocket-key", "not base64 at all!!!!!==")), .failure(.invalidKey))
        XCTAssertEqual(check(with("sec-websocket-key", "")), .failure(.invalidKey))
        XCTAssertEqual(WebSocketHandshake.Rejection.invalidKey.status, 400)
        XCTAssertEqual(WebSocketHandshake.Rejection.missingUpgrade.status, 400)
    }

    func testVersionMustBe13() {
        XCTAssertEqual(check(with("sec-websocket-version", "8")), .failure(.unsupportedVersion))
        XCTAssertEqual(check(with("sec-websocket-version", nil)), .failure(.unsupportedVersion))
        XCTAssertEqual(WebSocketHandshake.Rejection.unsupportedVersion.status, 426)
    }

    func testOriginAllowList() {
        let config = WebSocketConfiguration(allowedOrigins: ["https://app.example.com"])
        XCTAssertEqual(check(with("origin", "https://evil.example.com"), configuration: config), .failure(.originNotAllowed))
        XCTAssertEqual(WebSocketHandshake.Rejection.originNotAllowed.status, 403)
        XCTAssertEqual(check(with("origin", "https://APP.example.com"), configuration: config), .success("dGhlIHNhbXBsZSBub25jZQ=="))
        XCTAssertEqual(check(valid, configuration: config), .success("dGhlIHNhbXBsZSBub25jZQ=="), "no Origin: non-browser")
        XCTAssertEqual(check(with("origin", "https://evil.example.com")), .success("dGhlIHNhbXBsZSBub25jZQ=="), "nil list = any")
    }
}
