import Foundation
import TSApp
import TSDomain
import TSJSON
import TSRoutes
import TSTestSupport
import XCTest

/// The live inspector: the page, its JSON endpoints (checked against their
/// OpenAPI schemas), on/off and the production admin-token rule, the Host check, demo tokens,
/// and the per-second request ring behind its chart. The browser test is conformance/test_inspector.py.
final class InspectorTests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!
    var document: JSONValue?

    override func setUp() async throws {
        live = try LiveServer(overrides: ["realtime.pingIntervalMs": 5000])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    /// Validates `r` (200) against the documented schema of `GET path` in the served OpenAPI document.
    func checkSchema(_ r: APIClient.Response, _ pattern: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        XCTAssertEqual(r.status, 200, String(decoding: r.body.prefix(400), as: UTF8.self), file: file, line: line)
        if document == nil { document = try await api.get("/openapi.json").json }
        let document = document ?? .null
        let schema = document["paths"]?[pattern]?["get"]?["responses"]?["200"]?["content"]?["application/json"]?["schema"]
        let s = try XCTUnwrap(schema, "\(pattern) is not documented", file: file, line: line)
        XCTAssertEqual(JSONSchemaValidator(document: document).validate(r.json, against: s), [], "\(pattern): \(r.json.serializedString().prefix(600))",
                       file: file, line: line)
    }

    func testPageIsOneSelfContainedHTMLDocument() async throws {
        let r = try await api.get("/inspector")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(r.header("Cache-Control"), "no-store")
        let csp = try XCTUnwrap(r.header("Content-Security-Policy"))
        XCTAssertTrue(csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"), csp)
        let html = String(decoding: r.body, as: UTF8.self)
        XCTAssertTrue(html.hasPrefix("<!doctype html>"))
        XCTAssertTrue(html.contains("<script>") && html.contains("</html>"))
        // No build step, no CDN, no external font: nothing is loaded from anywhere.
        for needle in ["<script src", "<link", "@import", "url(", "https://", "fonts.", "cdn"] {
            XCTAssertFalse(html.lowercased().contains(needle), "the page references \(needle)")
        }
        // Server strings are rendered as text, never parsed as HTML.
        XCTAssertFalse(html.contains("innerHTML"))
        for endpoint in ["snapshot?", "events?", "demo"] {
            XCTAssertTrue(html.contains("api(\"\(endpoint)"), "the page polls \(endpoint)")
        }
    }

    func testEndpointsShowSocketsRoomsEventsAndRequests() async throws {
        let alice = try await api.register("alice", firstName: "Alice")
        let bob = try await api.register("bob")
        let created = try await api.post("/api/rooms", ["name": "Board", "memberIds": [.string(bob.id)]], token: alice.token)
        let room = try XCTUnwrap(created.json["data"]?["id"]?.stringValue)
        let posted = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4,
                                                                      "content": "<b>hi</b>"], token: alice.token)
        let element = try XCTUnwrap(posted.json["data"]?["id"]?.stringValue)

        // A socket of bob's, joined to the room, over polling.
        let socket = try await PollingSocket.connect(base: live.base, token: bob.token)
        try await socket.emit("room:join", ["roomId": .string(room)], ackId: 1)
        _ = try await socket.receive(until: { $0.hasPrefix("431[") })

        let sockets = try await api.get("/inspector/api/sockets")
        try await checkSchema(sockets, "/inspector/api/sockets")
        XCTAssertEqual(sockets.json["total"], 1)
        let s = try XCTUnwrap(sockets.json["sockets"]?.arrayValue?.first)
        XCTAssertEqual(s["engineSessionId"]?.stringValue, socket.engineSid)
        XCTAssertEqual(s["userId"]?.stringValue, bob.id)
        XCTAssertEqual(s["username"], "bob")
        XCTAssertEqual(s["transport"], "polling")
        XCTAssertEqual(s["roomIds"], [.string(room)])
        XCTAssertEqual(s["channels"], [.string("room:" + room), .string("user:" + bob.id)])
        let connectedAt = try XCTUnwrap(s["connectedAt"]?.intValue)
        XCTAssertLessThan(abs(connectedAt - Int64(Date().timeIntervalSince1970)), 60)

        let rooms = try await api.get("/inspector/api/rooms")
        try await checkSchema(rooms, "/inspector/api/rooms")
        XCTAssertEqual(rooms.json["total"], 1)
        let r = try XCTUnwrap(rooms.json["rooms"]?.arrayValue?.first)
        XCTAssertEqual(r["id"]?.stringValue, room)
        XCTAssertEqual(r["name"], "Board")
        XCTAssertEqual(r["elementCount"], 1)
        XCTAssertEqual(r["memberCount"], 2)
        XCTAssertEqual(r["sockets"], 1)
        let members = r["members"]?.arrayValue ?? []
        XCTAssertEqual(Set(members.compactMap { $0["username"]?.stringValue }), ["alice", "bob"])
        XCTAssertEqual(members.first { $0["username"] == "bob" }?["inRoom"], true)
        XCTAssertEqual(members.first { $0["username"] == "alice" }?["online"], false)

        // A REST toggle shows up in the tail, filterable by event name and room.
        let before = live.server.eventLog.lastSequence
        let toggled = try await api.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", token: alice.token)
        XCTAssertEqual(toggled.status, 200)
        // The event leaves after the answer, in commit order (docs/realtime.md "Order"): polled for, with a deadline.
        var tail = try await api.get("/inspector/api/events?event=element:reaction:added&roomId=\(room)")
        let deadline = Date().addingTimeInterval(10)
        while (tail.json["events"]?.arrayValue ?? []).isEmpty && Date() < deadline {
            tail = try await api.get("/inspector/api/events?event=element:reaction:added&roomId=\(room)")
        }
        try await checkSchema(tail, "/inspector/api/events")
        let events = tail.json["events"]?.arrayValue ?? []
        XCTAssertFalse(events.isEmpty)
        for e in events {
            XCTAssertEqual(e["event"], "element:reaction:added")
            XCTAssertEqual(e["payload"]?["elementId"]?.stringValue, element)
            XCTAssertGreaterThan(e["seq"]?.intValue ?? 0, before)
        }
        XCTAssertEqual(tail.json["lastSequence"]?.intValue, live.server.eventLog.lastSequence)
        let none = try await api.get("/inspector/api/events?event=element:reaction:added&roomId=other-room")
        XCTAssertEqual(none.json["events"], [])
        // Newest first without `since`, then follow with `since`.
        let newest = try await api.get("/inspector/api/events?limit=1")
        XCTAssertEqual(newest.json["events"]?[0]?["seq"]?.intValue, live.server.eventLog.lastSequence)
        let after = try await api.get("/inspector/api/events?since=\(before)")
        XCTAssertEqual(after.json["events"]?.arrayValue?.first?["seq"]?.intValue, before + 1)
        try await expectStatus(api, "/inspector/api/events?since=-1", 400)
        try await expectStatus(api, "/inspector/api/events?limit=0", 400)

        // The chart's data counts the API requests above, but not the inspector's own.
        let requests = try await api.get("/inspector/api/requests?seconds=120")
        try await checkSchema(requests, "/inspector/api/requests")
        let seconds = requests.json["seconds"]?.arrayValue ?? []
        XCTAssertEqual(seconds.count, 120)
        let counted = seconds.reduce(0) { $0 + ($1["requests"]?.intValue ?? 0) }
        XCTAssertGreaterThanOrEqual(counted, 5, "register x2, room, element, toggle (and the Socket.IO polls)")
        let ring = live.server.httpMetrics.recent(seconds: 120).reduce(0) { $0 + $1.requests }
        try await Task.sleep(nanoseconds: 50_000_000)
        for _ in 0..<5 { _ = try await api.get("/inspector/api/overview") }
        XCTAssertEqual(live.server.httpMetrics.recent(seconds: 120).reduce(0) { $0 + $1.requests }, ring, "the inspector's own requests are not counted")
        try await expectStatus(api, "/inspector/api/requests?seconds=601", 400)

        // The page's one-request poll carries the same answers.
        let snapshot = try await api.get("/inspector/api/snapshot?since=\(before)&seconds=60")
        try await checkSchema(snapshot, "/inspector/api/snapshot")
        XCTAssertEqual(snapshot.json["sockets"]?["total"], 1)
        XCTAssertEqual(snapshot.json["rooms"]?["rooms"]?[0]?["id"]?.stringValue, room)
        XCTAssertEqual(snapshot.json["requests"]?["seconds"]?.arrayValue?.count, 60)
        XCTAssertEqual(snapshot.json["events"]?["events"]?.arrayValue?.first?["seq"]?.intValue, before + 1)
        let overview = try await api.get("/inspector/api/overview")
        try await checkSchema(overview, "/inspector/api/overview")
        XCTAssertEqual(overview.json["sockets"]?["polling"], 1)
        XCTAssertEqual(overview.json["demo"], false)
        XCTAssertEqual(overview.json["tokenRequired"], false)

        // Outside demo mode no token is ever shown.
        let demo = try await api.get("/inspector/api/demo")
        try await checkSchema(demo, "/inspector/api/demo")
        XCTAssertEqual(demo.json, ["demo": false, "users": []])
        for path in ["sockets", "rooms", "events", "overview", "snapshot"] {
            let body = String(decoding: try await api.get("/inspector/api/" + path).body, as: UTF8.self)
            XCTAssertFalse(body.contains(alice.token) || body.contains(bob.token), "\(path) leaks a token")
        }
    }

    func testDemoModeShowsWorkingDemoTokens() async throws {
        let demo = try LiveServer(overrides: ["demo": true])
        defer { Task { await demo.stop() } }
        try await DemoSeeder.seedIfEmpty(demo.server.domain)
        let client = APIClient(base: demo.base)
        let r = try await client.get("/inspector/api/demo")
        XCTAssertEqual(r.json["demo"], true)
        let users = r.json["users"]?.arrayValue ?? []
        XCTAssertEqual(users.compactMap { $0["username"]?.stringValue }, DemoSeeder.users.map(\.username))
        for u in users {
            let token = try XCTUnwrap(u["token"]?.stringValue)
            let me = try await client.get("/api/auth/me", token: token)
            XCTAssertEqual(me.json["data"]?["username"], u["username"])
        }
        let overview = try await client.get("/inspector/api/overview")
        XCTAssertEqual(overview.json["demo"], true)
        let rooms = try await client.get("/inspector/api/rooms")
        XCTAssertEqual(rooms.json["rooms"]?.arrayValue?.first { $0["name"] == "Design Team" }?["elementCount"], 18)
        await demo.stop()
    }

    func testNoInspectorSettingAnswers404() async throws {
        let off = try LiveServer(overrides: ["inspector.enabled": false])
        let client = APIClient(base: off.base)
        for path in ["/inspector", "/inspector/api/overview", "/inspector/api/events", "/inspector/api/demo"] {
            try await expectStatus(client, path, 404, path)
        }
        XCTAssertFalse(off.server.servesInspector)
        XCTAssertTrue(live.server.servesInspector)
        let paths = try await client.get("/openapi.json").json["paths"]?.objectValue?.keys ?? []
        XCTAssertFalse(paths.contains { $0.hasPrefix("/inspector") }, "the document lists only registered routes")
        await off.stop()
    }

    func testProductionServesTheInspectorOnlyWithTheAdminToken() async throws {
        // Production without an admin token: not served at all.
        let bare = try Self.productionServer(adminToken: nil)
        let bareClient = APIClient(base: "http://127.0.0.1:\(bare.port)")
        try await expectStatus(bareClient, "/inspector", 404)
        try await expectStatus(bareClient, "/inspector/api/overview", 404)
        await bare.shutdown()

        let admin = "admin-token-0123456789"
        let server = try Self.productionServer(adminToken: admin)
        let client = APIClient(base: "http://127.0.0.1:\(server.port)")
        defer { Task { await server.shutdown() } }
        let user = try await client.register("carol")
        for path in ["/inspector", "/inspector/api/overview", "/inspector/api/sockets", "/inspector/api/events"] {
            try await expectStatus(client, path, 401, "\(path) without a token")
            try await expectStatus(client, path, token: "wrong", 401, "\(path) with a wrong token")
            try await expectStatus(client, path, token: user.token, 401, "\(path) with a user's token")
            try await expectStatus(client, path, token: admin, 200, "\(path) with the admin token")
        }
        let refused = try await client.get("/inspector")
        XCTAssertEqual(refused.header("WWW-Authenticate"), "Bearer realm=\"touchsync-inspector\"")
        XCTAssertFalse(String(decoding: refused.body, as: UTF8.self).contains(admin))
        // ?token= opens the page (a browser's address bar), not the API.
        try await expectStatus(client, "/inspector?token=\(admin)", 200)
        try await expectStatus(client, "/inspector?token=nope", 401)
        try await expectStatus(client, "/inspector/api/overview?token=\(admin)", 401)
        let overview = try await client.get("/inspector/api/overview", token: admin)
        XCTAssertEqual(overview.json["tokenRequired"], true)
        let demo = try await client.get("/inspector/api/demo", token: admin)
        XCTAssertEqual(demo.json["users"], [])
        // With a token, any Host is fine (the token is the protection).
        XCTAssertEqual(try Self.rawGet(port: server.port, path: "/inspector/api/overview", host: "touchsync.example.com",
                                       headers: ["Authorization: Bearer \(admin)"]).status, 200)
        await server.shutdown()
    }

    func testOpenModeAnswersOnlyLocalhostOrIPHosts() throws {
        for host in ["127.0.0.1:\(live.port)", "localhost:\(live.port)", "localhost", "[::1]:\(live.port)", "192.168.1.20:3000", "app.localhost"] {
            XCTAssertEqual(try Self.rawGet(port: live.port, path: "/inspector/api/overview", host: host).status, 200, host)
        }
        for host in ["attacker.example", "attacker.example:\(live.port)", "127.0.0.1.nip.io", "1.2.3.4.5"] {
            let r = try Self.rawGet(port: live.port, path: "/inspector/api/overview", host: host)
            XCTAssertEqual(r.status, 403, host)
            XCTAssertTrue(r.body.contains("inspector.adminToken"), r.body)
            XCTAssertEqual(try Self.rawGet(port: live.port, path: "/inspector", host: host).status, 403, host)
        }
    }

    func testPerSecondRingOfRequestCountsAndLatency() {
        final class Clock: WallClock, @unchecked Sendable {
            // Invariant: only touched by this test's thread.
            var seconds: Int64 = 1_000_000
            func nowSeconds() -> Int64 { seconds }
            func nowMicroseconds() -> Int64 { seconds * 1_000_000 }
        }
        let clock = Clock()
        let metrics = HTTPMetrics(clock: clock)
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 200, durationNanoseconds: 2_000_000)
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 404, durationNanoseconds: 4_000_000)
        metrics.requestFinished(method: .POST, routePattern: nil, status: 500, durationNanoseconds: 6_000_000)
        metrics.requestFinished(method: .GET, routePattern: "/inspector/api/overview", status: 200, durationNanoseconds: 9_000_000)
        clock.seconds += 2
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 200, durationNanoseconds: 1_000_000)

        let recent = metrics.recent(seconds: 4)
        XCTAssertEqual(recent.map(\.second), [999_999, 1_000_000, 1_000_001, 1_000_002])
        XCTAssertEqual(recent.map(\.requests), [0, 3, 0, 1], "the inspector's own request is left out")
        guard recent.count == 4 else { return XCTFail("expected 4 seconds, got \(recent.count)") }
        XCTAssertEqual(recent[1].clientErrors, 1)
        XCTAssertEqual(recent[1].serverErrors, 1)
        XCTAssertEqual(recent[1].latencySumNanoseconds, 12_000_000)
        XCTAssertEqual(recent[1].latencyMaxNanoseconds, 6_000_000)

        // A slot is reused after `recentCapacity` seconds: the old second reads as empty.
        clock.seconds += Int64(HTTPMetrics.recentCapacity)
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 200, durationNanoseconds: 1_000_000)
        let later = metrics.recent(seconds: HTTPMetrics.recentCapacity + 50)
        XCTAssertEqual(later.count, HTTPMetrics.recentCapacity)
        XCTAssertEqual(later.last?.requests, 1)
        XCTAssertEqual(later.reduce(0) { $0 + $1.requests }, 1, "seconds older than the ring are gone")
    }

    // MARK: helpers

    func expectStatus(_ client: APIClient, _ path: String, token: String? = nil, _ status: Int, _ message: String = "",
                      file: StaticString = #filePath, line: UInt = #line) async throws {
        let r = try await client.get(path, token: token)
        XCTAssertEqual(r.status, status, "\(path) \(message)", file: file, line: line)
    }

    static func productionServer(adminToken: String?) throws -> TouchSyncServer {
        _ = LiveServer.bootstrapLogging
        var o: [String: JSONValue] = ["server.port": 0, "database.path": ":memory:", "auth.passwordIterations": 1000,
                                      "auth.jwtSecret": "test-secret-test-secret-test-secret", "server.eventLoops": 2]
        if let adminToken { o["inspector.adminToken"] = .string(adminToken) }
        let config = try AppConfiguration.load(configFile: nil, environment: [:], overrides: o)
        let server = try TouchSyncServer(configuration: config, environment: ["TOUCHSYNC_ENV": "production"])
        try server.start()
        return server
    }

    /// One HTTP/1.1 GET over a plain socket, with a chosen Host header (URLSession sets its own).
    static func rawGet(port: Int, path: String, host: String, headers: [String] = []) throws -> (status: Int, body: String) {
        let fd = TestSockets.connectLoopback(port: port) { TestSockets.setReceiveTimeout($0, seconds: 10) }
        guard fd >= 0 else { throw POSIXError(.ECONNREFUSED) }
        defer { close(fd) }
        let request = (["GET \(path) HTTP/1.1", "Host: \(host)", "Connection: close"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
        _ = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        let text = String(decoding: data, as: UTF8.self)
        let status = Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }
}
