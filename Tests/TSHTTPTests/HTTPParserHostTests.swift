import XCTest
import Logging
import TSJSON
@testable import TSHTTP

/// `Host` validation (RFC 9112 §3.2, RFC 9110 §7.2, RFC 3986 §3.2.2): byte fixtures through the
/// parser, the grammar on its own, and a live server answering 400 and closing.
final class HTTPParserHostTests: XCTestCase {
    private func firstEvent(_ raw: String) -> HTTPParserEvent? {
        var p = HTTPParser()
        p.feed(Array(raw.utf8))
        return p.next()
    }

    private func status(ofHost host: String, version: String = "HTTP/1.1") -> Int? {
        switch firstEvent("GET / \(version)\r\nHost: \(host)\r\n\r\n") {
        case .error(let e): return e.status
        case .request: return 200
        default: return nil
        }
    }

    static let invalidHosts = [
        "a b", "a/b@c", "x:99999", "[::1", "a@b", "a/b", "a?b", "a#b", "x:port", "x:-1", "x:1:2", "x:123456",
        "[::1]x", "[::1]:99999", "[]", "[:::]", "[1::2::3]", "[1:2:3:4:5:6:7:8:9]", "[1:2:3:4:5:6:7]", "[12345::]",
        "[::1%25eth0]", "[1.2.3.4]", "[::256.1.1.1]", "[::01.1.1.1]", "[v1.]", "[vz.x]", "[:1]", "[1:]", "a%2", "a%zz",
        "a\"b", "a<b", "[::1]]", "a[b]", "::1",
    ]

    static let validHosts = [
        "", "h", "localhost", "localhost:3000", "127.0.0.1", "127.0.0.1:80", "example.com:", "a-b.c_d~e",
        "x:0", "x:65535", "xn--bcher-kva.example", "a%20b", "!$&'()*+,;=", "[::1]", "[::1]:8080", "[::]", "[1::]",
        "[fe80::1:2]", "[2001:db8:0:0:0:0:2:1]", "[1:2:3:4:5:6:7::]", "[::ffff:192.0.2.1]", "[1:2:3:4:5:6:1.2.3.4]",
        "[v7.fe80::a+en1]", "999.999.999.999",
    ]

    func testInvalidHostExamplesAreRefusedWith400() {
        for host in ["a b", "a/b@c", "x:99999", "[::1"] {
            XCTAssertEqual(status(ofHost: host), 400, host)
            guard case .error(let e) = firstEvent("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n") else { XCTFail(host); continue }
            XCTAssertEqual(e.reason, "invalid Host header", host)
        }
    }

    func testHostGrammar() {
        for host in Self.invalidHosts {
            XCTAssertFalse(HTTPParser.isValidHost(host), "accepted: \(host)")
            XCTAssertEqual(status(ofHost: host), 400, host)
        }
        for host in Self.validHosts {
            XCTAssertTrue(HTTPParser.isValidHost(host), "refused: \(host)")
            XCTAssertEqual(status(ofHost: host), 200, host)
        }
    }

    func testHTTP10HostIsOptionalButValidatedWhenSent() {
        guard case .request = firstEvent("GET / HTTP/1.0\r\n\r\n") else { return XCTFail("1.0 without Host refused") }
        XCTAssertEqual(status(ofHost: "a b", version: "HTTP/1.0"), 400)
        XCTAssertEqual(status(ofHost: "ok:80", version: "HTTP/1.0"), 200)
    }

    func testMissingAndDuplicateHostOnHTTP11() {
        let cases = [
            "GET / HTTP/1.1\r\n\r\n": "missing Host header",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n": "duplicate Host header",
            "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nhost: b\r\n\r\n": "duplicate Host header",
            "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n": "duplicate Host header",
        ]
        for (raw, reason) in cases {
            guard case .error(let e) = firstEvent(raw) else { XCTFail(raw); continue }
            XCTAssertEqual(e.status, 400, raw)
            XCTAssertEqual(e.reason, reason, raw)
        }
    }

    func testHostIsValidatedBeforeAnyBodyIsBuffered() {
        // The 400 comes from the head alone: the body's bytes are never needed.
        guard case .error(let e) = firstEvent("POST / HTTP/1.1\r\nHost: a b\r\nContent-Length: 1000000\r\n\r\n") else {
            return XCTFail("no error from the head")
        }
        XCTAssertEqual(e.status, 400)
    }

    func testLiveServerAnswers400AndClosesForABadHost() async throws {
        var config = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: 1)
        config.maxBodyBytes = 1024
        var b = RouterBuilder()
        b.get("/hello") { _ in .json(["hello": "world"]) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = HTTPServer(configuration: config, responder: b.freeze(), logger: logger)
        let port = try server.start()
        for host in ["a b", "a/b@c", "x:99999", "[::1"] {
            let c = try RawClient(port: port)
            try c.send("GET /hello HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            let r = try c.readResponse()
            XCTAssertEqual(r.status, 400, host)
            XCTAssertEqual(try JSONValue.parse(r.body)["error"]?["code"]?.stringValue, "BAD_REQUEST", host)
            XCTAssertEqual(r.header("Connection"), "close", host)
            XCTAssertTrue(c.waitForClose(), "closed after 400 for \(host)")
        }
        for raw in ["GET /hello HTTP/1.1\r\n\r\n", "GET /hello HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"] {
            let c = try RawClient(port: port)
            try c.send(raw)
            XCTAssertEqual(try c.readResponse().status, 400, raw)
        }
        let ok = try RawClient(port: port)
        try ok.send("GET /hello HTTP/1.1\r\nHost: [::1]:3000\r\n\r\n")
        XCTAssertEqual(try ok.readResponse().status, 200)
        await server.shutdown()
    }
}
