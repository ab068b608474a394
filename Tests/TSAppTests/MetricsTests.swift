import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// `GET /metrics`: Prometheus text format with requests by route and status,
/// latency histograms, connections, sockets by transport, rooms, events, database and notifications.
final class MetricsTests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true, "realtime.pingIntervalMs": 5000])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    struct Sample: Hashable { let name: String; let labels: [String: String] }

    /// Parses the exposition text strictly: every sample line `name{labels} value`, every family
    /// announced by HELP and TYPE before its samples.
    func scrape(file: StaticString = #filePath, line: UInt = #line) async throws -> (text: String, samples: [Sample: Double]) {
        let r = try await api.get("/metrics")
        XCTAssertEqual(r.status, 200, file: file, line: line)
        XCTAssertEqual(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8", file: file, line: line)
        let text = String(decoding: r.body, as: UTF8.self)
        var samples: [Sample: Double] = [:]
        var typed: Set<String> = []
        let sampleLine = try NSRegularExpression(pattern: #"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$"#)
        let labelPair = try NSRegularExpression(pattern: #"([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)""#)
        for l in text.split(separator: "\n").map(String.init) {
            if l.hasPrefix("# TYPE ") { typed.insert(String(l.split(separator: " ").dropFirst(2).first ?? "")); continue }
            if l.hasPrefix("# HELP ") { continue }
            let ns = l as NSString
            guard let m = sampleLine.firstMatch(in: l, range: NSRange(location: 0, length: ns.length)) else {
                XCTFail("not a sample line: \(l)", file: file, line: line)
                continue
            }
            let name = ns.substring(with: m.range(at: 1))
            var labels: [String: String] = [:]
            if m.range(at: 3).location != NSNotFound {
                let inner = ns.substring(with: m.range(at: 3))
                for p in labelPair.matches(in: inner, range: NSRange(location: 0, length: (inner as NSString).length)) {
                    labels[(inner as NSString).substring(with: p.range(at: 1))] = (inner as NSString).substring(with: p.range(at: 2))
                }
            }
            var family = name
            for suffix in ["_bucket", "_sum", "_count"] where family.hasSuffix(suffix) {
                let base = String(family.dropLast(suffix.count))
                if typed.contains(base) { family = base }
            }
            XCTAssertTrue(typed.contains(family), "\(name) has no # TYPE before it", file: file, line: line)
            let value = try XCTUnwrap(Double(ns.substring(with: m.range(at: 4)).replacingOccurrences(of: "+Inf", with: "inf")), l)
            samples[Sample(name: name, labels: labels)] = value
        }
        return (text, samples)
    }

    func testRequestsByRouteAndStatusAndLatencyHistogram() async throws {
        for _ in 0..<3 { _ = try await api.get("/health") }
        let missing = try await api.get("/no/such/route")
        XCTAssertEqual(missing.status, 404)
        let unauthorized = try await api.get("/api/auth/me")
        XCTAssertEqual(unauthorized.status, 401)

        let (_, s) = try await scrape()
        XCTAssertEqual(s[Sample(name: "touchsync_http_requests_total", labels: ["method": "GET", "route": "/health", "status": "200"])], 3)
        XCTAssertEqual(s[Sample(name: "touchsync_http_requests_total", labels: ["method": "GET", "route": "unmatched", "status": "404"])], 1)
        XCTAssertEqual(s[Sample(name: "touchsync_http_requests_total", labels: ["method": "GET", "route": "/api/auth/me", "status": "401"])], 1)

        let health = ["method": "GET", "route": "/health"]
        XCTAssertEqual(s[Sample(name: "touchsync_http_request_duration_seconds_count", labels: health)], 3)
        XCTAssertEqual(s[Sample(name: "touchsync_http_request_duration_seconds_bucket", labels: health.merging(["le": "+Inf"]) { a, _ in a })], 3)
        let buckets = s.filter { $0.key.name == "touchsync_http_request_duration_seconds_bucket" && $0.key.labels["route"] == "/health" }
            .compactMap { k, v in k.labels["le"].flatMap { Double($0.replacingOccurrences(of: "+Inf", with: "inf")) }.map { ($0, v) } }
            .sorted { $0.0 < $1.0 }
        XCTAssertGreaterThan(buckets.count, 5)
        XCTAssertEqual(buckets.map(\.1), buckets.map(\.1).sorted(), "buckets are cumulative")
        XCTAssertGreaterThan(s[Sample(name: "touchsync_http_request_duration_seconds_sum", labels: health)] ?? 0, 0)
        XCTAssertGreaterThanOrEqual(s[Sample(name: "touchsync_http_connections_open", labels: [:])] ?? -1, 1, "this scrape's own connection")
        XCTAssertNotNil(s[Sample(name: "touchsync_tcp_connections_open", labels: [:])])
    }

    func testSocketsRoomsEventsDatabaseAndNotifications() async throws {
        let (alice, bob, room) = try await api.aliceAndBobInOneRoom()
        let socket = try await PollingSocket.connect(base: live.base, token: bob)
        try await socket.emit("room:join", ["roomId": .string(room)], ackId: 7)
        _ = try await socket.receive(until: { $0.hasPrefix("437[") })

        let (_, before) = try await scrape()
        XCTAssertEqual(before[Sample(name: "touchsync_sockets_connected", labels: ["transport": "polling"])], 1)
        XCTAssertEqual(before[Sample(name: "touchsync_sockets_connected", labels: ["transport": "websocket"])], 0)
        // The socket's own room, bob's user room and the TouchSync room.
        XCTAssertGreaterThanOrEqual(before[Sample(name: "touchsync_realtime_rooms", labels: [:])] ?? 0, 3)
        let emittedBefore = before[Sample(name: "touchsync_realtime_events_emitted_total", labels: [:])] ?? -1

        let created = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10],
                                         token: alice)
        XCTAssertEqual(created.status, 201)
        _ = try await socket.receive(until: { $0.contains("\"element:created\"") })

        // The notification for bob is delivered after the response; wait for the counter.
        var s: [Sample: Double] = [:]
        try await until(timeout: .seconds(5)) {
            s = try await scrape().samples
            return (s[Sample(name: "touchsync_notifications_delivered_total", labels: [:])] ?? 0) >= 1
        }
        XCTAssertEqual(s[Sample(name: "touchsync_notifications_delivered_total", labels: [:])], 1)
        XCTAssertGreaterThanOrEqual(s[Sample(name: "touchsync_realtime_events_emitted_total", labels: [:])] ?? 0, emittedBefore + 2,
                                    "element:created to the room and element:created:global to bob")
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_events_dropped_total", labels: [:])], 0)
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_slow_consumers_disconnected_total", labels: [:])], 0)
        XCTAssertEqual(s[Sample(name: "touchsync_db_write_queue_depth", labels: [:])], 0)
        XCTAssertGreaterThan(s[Sample(name: "touchsync_db_transaction_seconds_count", labels: [:])] ?? 0, 0)
        XCTAssertGreaterThan(s[Sample(name: "touchsync_db_transaction_seconds_sum", labels: [:])] ?? 0, 0)
        XCTAssertGreaterThan(s[Sample(name: "touchsync_db_write_jobs_total", labels: ["outcome": "committed"])] ?? 0, 0)
        XCTAssertNotNil(s[Sample(name: "touchsync_db_last_transaction_seconds", labels: [:])])
        XCTAssertEqual(s.first { $0.key.name == "touchsync_build_info" }?.value, 1)
    }

    /// A handshake flood from one address against the app's own settings: the sessions without a
    /// Socket.IO CONNECT stop at `realtime.maxUnconnectedSessionsPerAddress`, the rest get the
    /// reference's refusal, `/metrics` shows both, and `realtime.connectTimeout` closes them.
    func testUnconnectedSessionsAreCappedCountedAndExpire() async throws {
        await live.stop()
        live = try LiveServer(overrides: ["testMode": true, "realtime.maxUnconnectedSessionsPerAddress": 5,
                                          "realtime.connectTimeout": "1s"])
        api = APIClient(base: live.base)
        let port = live.port
        var statuses: [Int] = []
        for _ in 0..<40 {
            statuses.append(RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling").status)
        }
        XCTAssertEqual(statuses.filter { $0 == 200 }.count, 5, "\(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 403 }.count, 35, "\(statuses)")
        let refused = RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling")
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(try JSONValue.parse(refused.text)["code"], 4, refused.text)

        var s = try await scrape().samples
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_unconnected_sessions", labels: [:])], 5)
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_handshakes_refused_total", labels: ["reason": "per_address"])], 36)
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_handshakes_refused_total", labels: ["reason": "total"])], 0)

        // No CONNECT within realtime.connectTimeout: closed, counted, and the address is served again.
        let expired = try await until(timeout: .seconds(15)) {
            let now = try await self.scrape().samples
            return now[Sample(name: "touchsync_realtime_unconnected_sessions", labels: [:])] == 0
        }
        XCTAssertTrue(expired, "the sessions expire at realtime.connectTimeout")
        s = try await scrape().samples
        XCTAssertEqual(s[Sample(name: "touchsync_realtime_connect_timeouts_total", labels: [:])], 5)
        XCTAssertEqual(RawHTTP.request(port: port, "GET", "/socket.io/?EIO=4&transport=polling").status, 200)
    }

    func testWebSocketSocketsAreCountedByTransport() async throws {
        let data = try await api.post("/api/test/fixtures", ["users": [["username": "alice", "password": "alice-password"]]]).json["data"] ?? .null
        let token = try XCTUnwrap(data["users"]?["alice"]?["token"]?.stringValue)
        // Engine.IO v4 straight over WebSocket: open packet, then the Socket.IO CONNECT with auth.
        let ws = try RawWebSocketClient(port: live.port)
        try ws.handshake(path: "/socket.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { return XCTFail("no Engine.IO open packet") }
        ws.send("40" + JSONValue.object(["token": .string(token)]).serializedString())
        guard case .text(let connected) = ws.receive(), connected.hasPrefix("40{") else { return XCTFail("no Socket.IO CONNECT answer") }

        let s = try await scrape().samples
        XCTAssertEqual(s[Sample(name: "touchsync_sockets_connected", labels: ["transport": "websocket"])], 1)
        XCTAssertEqual(s[Sample(name: "touchsync_sockets_connected", labels: ["transport": "polling"])], 0)
        XCTAssertGreaterThanOrEqual(s[Sample(name: "touchsync_tcp_connections_open", labels: [:])] ?? 0, 2, "the WebSocket and this scrape")
        withExtendedLifetime(ws) {}  // closed by deinit
    }
}
