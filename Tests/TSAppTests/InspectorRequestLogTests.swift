import TSHTTP
import TSJSON
import XCTest
@testable import TSRoutes
@testable import TSInspector

/// The request list's pure parts: bounds, what is recorded, and redaction.
final class InspectorRequestLogTests: XCTestCase {
    func request(_ target: String, body: String = "", headers: HTTPHeaders = [:]) -> HTTPRequest {
        var r = HTTPRequest(method: HTTPMethod("POST"), target: target, headers: headers)
        r.body = Array(body.utf8)
        return r
    }

    func testRingKeepsTheNewestAndCutsBodiesWhenRecorded() {
        let log = InspectorRequestLog(capacity: 3, maxBodyBytes: 10)
        for i in 0..<5 { log.record(request("/api/x\(i)", body: String(repeating: "b", count: 25)), HTTPResponse(status: 201), durationMicroseconds: 5, timestampMs: 1) }
        let entries = log.entries(limit: 10)
        XCTAssertEqual(entries.map(\.target), ["/api/x4", "/api/x3", "/api/x2"], "newest first, the oldest evicted")
        XCTAssertEqual(entries[0].requestBody.count, 10, "only maxBodyBytes kept")
        XCTAssertEqual(entries[0].requestBodyBytes, 25)
        XCTAssertEqual(log.entries(since: 3, limit: 10).map(\.sequence), [5, 4])
        let json = InspectorRequestLog.json(entries[0])
        XCTAssertEqual(json["request"]?["truncated"], true)
    }

    func testInspectorSocketIOAndProbesAreNotRecorded() {
        let log = InspectorRequestLog(capacity: 10, maxBodyBytes: 10)
        for path in ["/inspector/api/snapshot", "/socket.io/?EIO=4", "/health", "/metrics", "/api/rooms"] {
            log.record(request(path), HTTPResponse(), durationMicroseconds: 1, timestampMs: 1)
        }
        XCTAssertEqual(log.entries(limit: 10).map(\.target), ["/api/rooms"])
        // Around the router the recorder is skipped for what it would not keep.
        let recorder = InspectorRequestRecorder(log: log, nowMs: { 1 })
        XCTAssertEqual(["/inspector/api/snapshot", "/socket.io/?EIO=4", "/health", "/metrics", "/api/rooms"].map { recorder.applies(to: request($0)) },
                       [false, false, false, false, true])
    }

    func testSecretsAreRedactedInHeadersQueriesJSONAndCutText() {
        XCTAssertEqual(InspectorRequestLog.redactHeaders([("Authorization", "Bearer abc"), ("Cookie", "s=1"), ("Accept", "*/*")]),
                       [["Authorization", "[redacted]"], ["Cookie", "[redacted]"], ["Accept", "*/*"]])
        XCTAssertEqual(InspectorRequestLog.redactTarget("/socket.io/?EIO=4&token=abc&x=1"), "/socket.io/?EIO=4&token=[redacted]&x=1")
        let body = Array(#"{"username":"alice","password":"hunter22","nested":{"token":"t","list":[{"passwordHash":"h"}]},"n":null}"#.utf8)
        XCTAssertEqual(InspectorRequestLog.displayBody(body, total: body.count),
                       ["json": ["username": "alice", "password": "[redacted]", "nested": ["token": "[redacted]", "list": [["passwordHash": "[redacted]"]]],
                                 "n": nil]])
        // A body cut in the middle of a secret: masked textually, the rest kept.
        let cut = Array(#"{"username":"alice","password":"hunter2"#.utf8)
        XCTAssertEqual(InspectorRequestLog.displayBody(cut, total: cut.count + 20),
                       ["text": .string(#"{"username":"alice","password":"[redacted]""#)])
        let escaped = Array(#"{"token": "a\"b", "x": "y"}"#.utf8)
        XCTAssertEqual(InspectorRequestLog.maskSecretsInText(String(decoding: escaped, as: UTF8.self)), #"{"token": "[redacted]", "x": "y"}"#)
        XCTAssertEqual(InspectorRequestLog.displayBody([], total: 0), .null)
    }
}
