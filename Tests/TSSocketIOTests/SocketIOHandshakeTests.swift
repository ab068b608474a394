import XCTest
import TSEngineIO
import TSJSON
@testable import TSSocketIO

/// `SocketIOHandshake` keeps a CONNECT auth that repeats a query parameter once (memory per idle socket)
/// and reads back exactly the auth the client sent, whichever way it is stored.
final class SocketIOHandshakeTests: XCTestCase {
    private func request(_ query: [String: String]) -> EngineHandshakeInfo {
        EngineHandshakeInfo(query: query, headers: [("Host", "example.test")], remoteAddress: "127.0.0.1")
    }

    func testAuthRepeatingTheQueryTokenReadsBackUnchanged() {
        let token = String(repeating: "eyJhbGciOiJIUzI1NiJ9.", count: 8)
        let auth: JSONValue = .object(JSONObject([("token", .string(token))]))
        let h = SocketIOHandshake(namespace: "/", request: request(["EIO": "4", "token": token]), auth: auth)
        XCTAssertEqual(h.auth, auth)
        XCTAssertEqual(h.query["token"], token)
        XCTAssertEqual(h.request.queryValue("token"), token)
        XCTAssertEqual(h.request.queryValue("EIO"), "4")
        XCTAssertNil(h.request.queryValue("missing"))
    }

    func testAuthThatDiffersFromTheQueryIsKeptAsSent() {
        let cases: [(query: [String: String], auth: JSONValue?)] = [
            (["token": "a"], .object(JSONObject([("token", .string("b"))]))),
            (["token": "a"], .object(JSONObject([("token", .string("a")), ("extra", .int(1))]))),
            (["token": "a"], .object(JSONObject([("token", .int(1))]))),
            ([:], .object(JSONObject([("token", .string(""))]))),
            (["token": ""], .object(JSONObject([("token", .string(""))]))),
            (["token": "a"], .array([.string("a")])),
            (["token": "a"], nil),
        ]
        for c in cases {
            let h = SocketIOHandshake(namespace: "/", request: request(c.query), auth: c.auth)
            XCTAssertEqual(h.auth, c.auth, "\(c)")
        }
    }
}
