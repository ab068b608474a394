import Foundation
import TSApp
import TSJSON
import XCTest

/// Test mode's movable clock (`/api/test/clock`) over real sockets: an app's "session expired →
/// log in again" path, `createdAt` in the future, and back with a reset; the sockets stay up.
extension TestModeTests {
    func testAdvancingTheClockExpiresTokensAndAResetPutsItBack() async throws {
        let user = try await api.register("clock\(UInt32.random(in: 0...UInt32.max))")
        let me = try await api.send("GET", "/api/auth/me", token: user.token)
        XCTAssertEqual(me.status, 200)

        let moved = try await api.post("/api/test/clock", ["advance": "31d"])
        XCTAssertEqual(moved.status, 200, String(decoding: moved.body, as: UTF8.self))
        XCTAssertEqual(moved.json["data"]?["offsetSeconds"]?.intValue, 31 * 86_400)
        let expired = try await api.send("GET", "/api/auth/me", token: user.token)
        XCTAssertEqual(expired.status, 401, "a 30-day token is past its expiry 31 days later")

        // A token issued now lives in the moved time, and what it creates is dated there.
        let login = try await api.post("/api/auth/login", ["username": .string(user.username), "password": "password-123"])
        XCTAssertEqual(login.status, 200, String(decoding: login.body, as: UTF8.self))
        let fresh = try XCTUnwrap(login.json["data"]?["token"]?.stringValue)
        let room = try await api.post("/api/rooms", ["name": "Later"], token: fresh)
        XCTAssertEqual(room.status, 201)
        let created = try XCTUnwrap(room.json["data"]?["createdAt"]?.stringValue)
        let clock = try await api.get("/api/test/clock")
        XCTAssertEqual(clock.json["data"]?["moved"]?.boolValue, true)
        XCTAssertEqual(String(created.prefix(10)), String((clock.json["data"]?["now"]?.stringValue ?? "").prefix(10)), "createdAt reads the moved clock")

        let set = try await api.post("/api/test/clock", ["set": "2030-06-01T12:00:00Z"])
        XCTAssertEqual(set.status, 200)
        XCTAssertTrue((set.json["data"]?["now"]?.stringValue ?? "").hasPrefix("2030-06-01T12:00"), "\(set.json)")

        let bad = try await api.post("/api/test/clock", ["advance": "soon"])
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.json["error"]?["field"]?.stringValue, "advance")
        let two = try await api.post("/api/test/clock", ["advance": "1d", "reset": true])
        XCTAssertEqual(two.status, 400, "exactly one of advance, set, reset")

        let reset = try await api.post("/api/test/reset")
        XCTAssertEqual(reset.status, 200)
        let after = try await api.get("/api/test/clock")
        XCTAssertEqual(after.json["data"]?["offsetSeconds"]?.intValue, 0, "a reset puts the clock back")
        XCTAssertEqual(after.json["data"]?["moved"]?.boolValue, false)
    }

    func testTheClockRouteDoesNotExistOutsideTestMode() async throws {
        let plain = try LiveServer()
        let r = try await APIClient(base: plain.base).send("GET", "/api/test/clock")
        XCTAssertEqual(r.status, 404)
        await plain.stop()
    }
}
