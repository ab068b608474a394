import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Hostile JSON bodies over real sockets: a 1 MiB body of 100,000 keys is parsed in linear time, so a
/// `/health` that lands on the same event loop is not held up; nesting past `server.maxJsonDepth`
/// is a 400 with a JSON error naming the setting.
final class HostileBodyAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    // One event loop, so the big body and the health check share it.
    override var serverOverrides: [String: JSONValue] { ["server.eventLoops": 1] }

    /// `{"00000":0,…,"99999":9,"pad":"xxx…"}`: 100,000 keys, exactly 1 MiB (= `server.maxBodyBytes`).
    static func manyKeysBody() -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(1 << 20)
        for k in 0..<100_000 {
            let digits = Array(String(k).utf8)
            out.append(UInt8(ascii: "\""))
            out += [UInt8](repeating: UInt8(ascii: "0"), count: 5 - digits.count) + digits
            out += Array("\":".utf8)
            out.append(UInt8(ascii: "0") + UInt8(k % 10))
            out.append(UInt8(ascii: ","))
        }
        out += Array("\"pad\":\"".utf8)
        out += [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) - out.count - 2)
        out += Array("\"}".utf8)
        return out
    }

    func testOneMebibyteOfKeysToLoginDoesNotStallHealth() throws {
        let body = Self.manyKeysBody()
        XCTAssertEqual(body.count, 1 << 20)
        let big = try RawTCPClient(port: live.port, timeoutSeconds: 60)
        let sent = Date()
        let head = "POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        XCTAssertTrue(big.write(Array(head.utf8) + body))
        // Right behind it, on the same (only) loop: before the fix this waited for the O(n²) parse
        // (about 10 s for 60,000 keys, ~30 s for these 100,000).
        let started = Date()
        let health = RawHTTP.request(port: live.port, "GET", "/health")
        let healthSeconds = Date().timeIntervalSince(started)
        XCTAssertEqual(health.status, 200)
        XCTAssertLessThan(healthSeconds, 5, "GET /health waited \(healthSeconds) s behind a 1 MiB JSON body")

        var data: [UInt8] = []
        var parsed: (response: RawHTTP.Response, complete: Bool)?
        while parsed?.complete != true, case .bytes(let chunk) = big.read() {
            data += chunk
            parsed = RawHTTP.parse(data)
        }
        let response = try XCTUnwrap(parsed?.response, "no answer to the 1 MiB login body")
        let loginSeconds = Date().timeIntervalSince(sent)
        XCTAssertLessThan(loginSeconds, 10, "the 1 MiB login body took \(loginSeconds) s to answer")
        // A valid JSON object without the login fields: a validation error, not 413 or a timeout.
        XCTAssertEqual(response.status, 400, response.text)
        XCTAssertEqual(try JSONValue.parse(response.body)["error"]?["code"]?.stringValue, "VALIDATION_ERROR")
    }

    func testNestingPastTheLimitIs400() async throws {
        func nested(_ depth: Int) -> Data {
            Data(("{\"username\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1)
                  + ",\"password\":\"x\"}").utf8)
        }
        let headers = ["Content-Type": "application/json"]
        let tooDeep = try await api.send("POST", "/api/auth/login", rawBody: nested(65), headers: headers)
        XCTAssertEqual(tooDeep.status, 400)
        let error = try XCTUnwrap(tooDeep.json["error"])
        XCTAssertEqual(error["code"]?.stringValue, "VALIDATION_ERROR")
        XCTAssertTrue(error["message"]?.stringValue?.contains("server.maxJsonDepth") == true, "\(error)")
        // At the limit the body parses; the refusal is then about the field, not the depth.
        let atLimit = try await api.send("POST", "/api/auth/login", rawBody: nested(64), headers: headers)
        XCTAssertEqual(atLimit.status, 400)
        XCTAssertFalse(atLimit.json["error"]?["message"]?.stringValue?.contains("server.maxJsonDepth") ?? true)
        // A million brackets: refused at the limit, and the server carries on.
        let hostile = try await api.send("POST", "/api/rooms", rawBody: Data(repeating: UInt8(ascii: "["), count: 1_000_000), headers: headers)
        XCTAssertTrue([400, 401].contains(hostile.status), "\(hostile.status)")
        let health = try await api.get("/health")
        XCTAssertEqual(health.status, 200)
    }

    func testTheDepthLimitIsASetting() async throws {
        await live.stop()
        live = try LiveServer(overrides: ["server.maxJsonDepth": 3])
        api = APIClient(base: live.base)
        let headers = ["Content-Type": "application/json"]
        let ok = try await api.send("POST", "/api/auth/register", rawBody: Data(#"{"username":"deep","password":"password-123","x":[[1]]}"#.utf8), headers: headers)
        XCTAssertNotEqual(ok.json["error"]?["message"]?.stringValue?.contains("server.maxJsonDepth"), true, "\(ok.json)")
        let deep = try await api.send("POST", "/api/auth/register", rawBody: Data(#"{"username":"deep","password":"password-123","x":[[[1]]]}"#.utf8), headers: headers)
        XCTAssertEqual(deep.status, 400)
        XCTAssertTrue(deep.json["error"]?["message"]?.stringValue?.contains("deeper than 3") == true, "\(deep.json)")
        // Like every 400 of the API, it names the input it is about: the body as a whole.
        XCTAssertEqual(deep.json["error"]?["field"]?.stringValue, "body", "\(deep.json)")
        let broken = try await api.send("POST", "/api/auth/register", rawBody: Data(#"{"username":"#.utf8), headers: headers)
        XCTAssertEqual(broken.status, 400)
        XCTAssertEqual(broken.json["error"]?["field"]?.stringValue, "body", "\(broken.json)")
    }
}
