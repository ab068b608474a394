import Foundation
import TSJSON
import XCTest

/// Anything unknown is a 500 that leaks nothing (no SQL, no SQLite text, no stack), and /health
/// tells the database is gone: the database is closed underneath a running server.
final class InternalErrorTests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    func testStorageFailureIsAGeneric500AndHealthIsDegraded() async throws {
        let user = try await api.register("alice")
        let before = try await api.get("/api/rooms/my-rooms", token: user.token)
        XCTAssertEqual(before.status, 200)
        // A good ping answers later probes for a second (Database.health); closing the database
        // must still show on the very next one.
        let healthy = try await api.get("/health")
        XCTAssertEqual(healthy.status, 200)
        XCTAssertEqual(healthy.json["database"], "ok")

        live.server.db.close()

        for (method, path, body) in [("GET", "/api/rooms/my-rooms", nil as JSONValue?), ("POST", "/api/rooms", ["name": "x"]),
                                     ("POST", "/api/auth/login", ["username": "alice", "password": "password-123"])] {
            let r = try await api.send(method, path, json: body, token: user.token)
            XCTAssertEqual(r.status, 500, "\(method) \(path)")
            XCTAssertEqual(r.json, ["error": ["code": "INTERNAL", "message": "Internal server error"]], "\(method) \(path)")
            let text = String(decoding: r.body, as: UTF8.self).lowercased()
            for leak in ["sqlite", "select", "database", "error 21", ".swift"] {
                XCTAssertFalse(text.contains(leak), "\(path) leaks \(leak): \(text)")
            }
            XCTAssertNotNil(r.header("X-Request-Id"))
        }
        let health = try await api.get("/health")
        XCTAssertEqual(health.status, 503, "the probe right after close, within a second of a good ping")
        XCTAssertEqual(health.json["status"], "degraded")
        XCTAssertEqual(health.json["database"], "error")
    }
}
