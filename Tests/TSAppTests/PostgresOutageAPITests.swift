import Foundation
import TSApp
import TSJSON
import TSStorage
import TSStorageTestSupport
import TSTestSupport
import XCTest

/// Over real sockets: a server on PostgreSQL (database.url; the PostgreSQL
/// migrations applied at start) whose database dies (`pg_ctl stop -m immediate`) answers 503
/// `UNAVAILABLE` with `Retry-After` at once, `/health` says degraded with the reason, and both
/// recover by themselves when the database is back, without a restart.
final class PostgresOutageAPITests: XCTestCase {
    func testDatabaseOutageGives503AndDegradedHealthThenRecovers() async throws {
        try XCTSkipUnless(PostgresAdmin.isSupported, "PostgreSQL variant skipped: this build has no PostgreSQL support (libpq is Linux only)")
        let database = try ScratchPostgres()
        addTeardownBlock { database.remove() }
        let live = try LiveServer(overrides: ["database.url": .string(database.url), "database.reconnectInitialBackoff": "50ms",
                                              "database.reconnectMaxBackoff": "200ms", "database.connectTimeout": "2s"])
        let api = APIClient(base: live.base)
        XCTAssertEqual(live.server.db.dialect, .postgres)
        XCTAssertGreaterThan(try live.server.db.readSync { try $0.scalarInt("SELECT count(*) FROM schema_migrations") } ?? 0, 0,
                             "the PostgreSQL migrations were applied at start")

        let healthy = try await api.get("/health")
        XCTAssertEqual(healthy.status, 200)
        XCTAssertEqual(healthy.json["database"]?.stringValue, "ok")
        let before = try await api.post("/api/auth/login", ["username": "ghost", "password": "not-the-password"])
        XCTAssertEqual(before.status, 401, String(decoding: before.body, as: UTF8.self))

        try database.stop()
        // The first request finds the connection dead; from then on every request is refused at once.
        _ = try await api.post("/api/auth/login", ["username": "ghost", "password": "not-the-password"])
        let started = Date()
        let refused = try await api.post("/api/auth/login", ["username": "ghost", "password": "not-the-password"])
        XCTAssertEqual(refused.status, 503, String(decoding: refused.body, as: UTF8.self))
        XCTAssertEqual(refused.json["error"]?["code"]?.stringValue, "UNAVAILABLE", String(decoding: refused.body, as: UTF8.self))
        XCTAssertNotNil(refused.header("Retry-After"))
        let degraded = try await api.get("/health")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "503 and /health answer at once while the database is down")
        XCTAssertEqual(degraded.status, 503)
        XCTAssertEqual(degraded.json["status"]?.stringValue, "degraded")
        XCTAssertEqual(degraded.json["database"]?.stringValue, "unavailable")
        XCTAssertTrue(degraded.json["degradedReason"]?.stringValue?.contains("unreachable") == true, String(decoding: degraded.body, as: UTF8.self))

        try database.start()
        var status = 0
        try await until(timeout: .seconds(30)) {
            status = try await api.get("/health").status
            return status == 200
        }
        XCTAssertEqual(status, 200, "health recovers without a restart")
        let after = try await api.post("/api/auth/login", ["username": "ghost", "password": "not-the-password"])
        XCTAssertEqual(after.status, 401, "requests are served again: \(String(decoding: after.body, as: UTF8.self))")
        await live.stop()
    }
}
