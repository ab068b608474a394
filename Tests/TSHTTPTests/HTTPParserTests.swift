import XCTest
@testable import TSHTTP

final class HTTPParserTests: XCTestCase {
    /// Feeds `input` and collects events until the parser needs more or fails.
    func events(_ input: String, limits: HTTPParserLimits = HTTPParserLimits()) -> [HTTPParserEvent] {
        var p = HTTPParser(limits: limits)
        p.feed(Array(input.utf8))
        var out: [HTTPParserEvent] = []
        while let e = p.next() { out.append(e) }
        return out
    }

    func errorStatus(_ input: String, limits: HTTPParserLimits = HTTPParserLimits(), file: StaticString = #filePath, line: UInt = #line) -> Int? {
        for e in events(input, limits: limits) {
            if case .error(let err) = e { return err.status }
        }
        return nil
    }

    func testSimpleGet() throws {
        let ev = events("GET /a/b?x=1 HTTP/1.1\r\nHost: h\r\nX-Y:  z \r\n\r\n")
        XCTAssertEqual(ev.count, 1)
        guard case .request(let head, let body, _) = ev[0] else { return XCTFail("\(ev)") }
        XCTAssertEqual(head.method, .GET)
        XCTAssertEqual(head.target, "/a/b?x=1")
        XCTAssertEqual(head.version, .http1_1)
        XCTAssertEqual(head.headers["x-y"], "z")
        XCTAssertTrue(head.keepAlive)
        XCTAssertTrue(body.isEmpty)
    }

    func testContentLengthBodyAndKeepAliveRules() {
        let ev = events("POST /p HTTP/1.0\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(ev.count, 2)
        guard case .request(let h1, let b1, _) = ev[0], case .request(let h2, _, _) = ev[1] else { return XCTFail() }
        XCTAssertEqual(b1, Array("hello".utf8))
        XCTAssertFalse(h1.keepAlive, "HTTP/1.0 without keep-alive closes")
        XCTAssertFalse(h2.keepAlive, "Connection: close")
        let ev10 = events("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        guard case .request(let h3, _, _) = ev10.first else { return XCTFail() }
        XCTAssertTrue(h3.keepAlive)
    }

    func testChunkedBodyWithExtensionsAndTrailers() {
        let raw = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
        let ev = events(raw)
        XCTAssertEqual(ev.count, 1)
        guard case .request(_, let body, let trailers) = ev[0] else { return XCTFail("\(ev)") }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "hello world")
        XCTAssertEqual(trailers["x-trailer"], "t")
    }

    func testExpectContinue() {
        var p = HTTPParser()
        p.feed(Array("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        guard case .expectContinue = p.next() else { return XCTFail() }
        XCTAssertNil(p.next())
        XCTAssertEqual(p.progress, .body)
        p.feed(Array("abc".utf8))
        guard case .request(_, let body, _) = p.next() else { return XCTFail() }
        XCTAssertEqual(body, Array("abc".utf8))
        XCTAssertEqual(p.progress, .idle)
        XCTAssertEqual(errorStatus("POST /u HTTP/1.1\r\nHost: h\r\nExpect: something\r\n\r\n"), 417)
    }

    func testMalformedRequestsAreRejected() {
        let cases: [(String, Int, String)] = [
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400, "duplicate CL"),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "conflicting CL"),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\nabc", 400, "CL list"),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400, "negative CL"),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "overflow CL"),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "CL + TE"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "unknown coding"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "gzip then chunked"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400, "double chunked"),
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "TE in 1.0"),
            ("GET / HTTP/1.1\nHost: h\r\n\r\n", 400, "bare LF request line"),
            ("GET / HTTP/1.1\r\nHost: h\n\r\n", 400, "bare LF header"),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n", 400, "obs-fold"),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", 400, "NUL in value"),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", 400, "CR in value"),
            ("GET / HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n", 400, "space in name"),
            ("GET / HTTP/1.1\r\nHost: h\r\nX : v\r\n\r\n", 400, "space before colon"),
            ("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400, "empty name"),
            ("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400, "no colon"),
            ("GET / HTTP/1.1\r\nHost: h\r\nX(y): v\r\n\r\n", 400, "separator in name"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "invalid chunk size"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", 400, "empty chunk size"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400, "missing chunk CRLF"),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", 400, "chunk size overflow"),
            ("GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400, "double space"),
            ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400, "trailing space"),
            ("GET / HTTP/x.1\r\nHost: h\r\n\r\n", 400, "bad version"),
            ("GET / HTTP/11\r\nHost: h\r\n\r\n", 400, "bad version 2"),
            ("GET /\r\nHost: h\r\n\r\n", 400, "HTTP/0.9 style"),
            ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bad method"),
            ("GET nope HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bad target"),
            ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505, "version 2"),
            ("GET / HTTP/1.1\r\n\r\n", 400, "missing Host"),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Hosts"),
        ]
        for (raw, status, name) in cases {
            XCTAssertEqual(errorStatus(raw), status, name)
        }
    }

    func testParserIsDeadAfterError() {
        var p = HTTPParser()
        p.feed(Array("GET / HTTP/1.1\r\nHost: h\r\nX : v\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .error = p.next() else { return XCTFail() }
        XCTAssertNil(p.next())
        XCTAssertTrue(p.hasFailed)
    }

    func testLimits() {
        var limits = HTTPParserLimits()
        limits.maxRequestLineBytes = 32
        limits.maxHeaderBytes = 64
        limits.maxHeaderCount = 3
        limits.maxBodyBytes = 10
        XCTAssertEqual(errorStatus("GET /" + String(repeating: "a", count: 40) + " HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits), 414)
        // 414 detected before the line ends (no unbounded buffering).
        XCTAssertEqual(errorStatus("GET /" + String(repeating: "a", count: 40), limits: limits), 414)
        XCTAssertEqual(errorStatus("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 80) + "\r\n\r\n", limits: limits), 431)
        XCTAssertEqual(errorStatus("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 80), limits: limits), 431)
        XCTAssertEqual(errorStatus("GET / HTTP/1.1\r\nHost: h\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n", limits: limits), 431)
        XCTAssertNil(errorStatus("GET / HTTP/1.1\r\nHost: h\r\na: 1\r\nb: 2\r\n\r\n", limits: limits))
        XCTAssertEqual(errorStatus("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits), 413)
        XCTAssertNil(errorStatus("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits))
        XCTAssertEqual(errorStatus("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n", limits: limits), 413)
    }

    func testLeadingEmptyLinesAreIgnored() {
        let ev = events("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        guard case .request = ev.first else { return XCTFail("\(ev)") }
    }

    func testTakeRemainingBytesAfterRequest() {
        var p = HTTPParser()
        p.feed(Array("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n\u{81}\u{05}".utf8))
        guard case .request = p.next() else { return XCTFail() }
        XCTAssertEqual(p.takeRemainingBytes(), [0xC2, 0x81, 0x05])
        XCTAssertEqual(p.bufferedBytes, 0)
    }

    /// Describes events so sequences can be compared.
    func describe(_ events: [HTTPParserEvent]) -> [String] {
        events.map { e in
            switch e {
            case .expectContinue(let h): return "continue \(h.target)"
            case .request(let h, let body, let trailers):
                return "\(h.method) \(h.target) \(h.headers.fields.map { "\($0.name)=\($0.value)" }) body=\(body) trailers=\(trailers.fields.map { "\($0.name)=\($0.value)" }) ka=\(h.keepAlive)"
            case .error(let err): return "error \(err)"
            }
        }
    }

    func testPipelinedRequestsSplitAtEveryByteBoundary() {
        let pipeline = "GET /one HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n"
            + "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody"
            + "POST /three HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nT: x\r\n\r\n"
        let bytes = Array(pipeline.utf8)
        let reference = describe(events(pipeline))
        XCTAssertEqual(reference.count, 4) // 3 requests + 1 continue
        XCTAssertFalse(reference.contains { $0.hasPrefix("error") })
        // Two-way split at every byte boundary.
        for i in 0...bytes.count {
            var p = HTTPParser()
            var got: [HTTPParserEvent] = []
            p.feed(Array(bytes[0..<i]))
            while let e = p.next() { got.append(e) }
            p.feed(Array(bytes[i...]))
            while let e = p.next() { got.append(e) }
            XCTAssertEqual(describe(got), reference, "split at \(i)")
        }
        // One byte at a time.
        var p = HTTPParser()
        var got: [HTTPParserEvent] = []
        for b in bytes {
            p.feed([b])
            while let e = p.next() { got.append(e) }
        }
        XCTAssertEqual(describe(got), reference)
        // Three-way splits (coarse grid for the second cut to keep it quick).
        for i in stride(from: 0, through: bytes.count, by: 3) {
            for j in stride(from: i, through: bytes.count, by: 7) {
                var p = HTTPParser()
                var got: [HTTPParserEvent] = []
                for part in [bytes[0..<i], bytes[i..<j], bytes[j...]] {
                    p.feed(Array(part))
                    while let e = p.next() { got.append(e) }
                }
                XCTAssertEqual(describe(got), reference, "split at \(i),\(j)")
            }
        }
    }
}
