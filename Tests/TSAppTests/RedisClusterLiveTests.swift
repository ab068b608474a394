import Foundation
import TSApp
import TSJSON
import TSTestSupport
import XCTest

/// Cross-node fan-out over Redis, over real sockets: two in-process nodes on port 0 sharing one SQLite file
/// (WAL works across connections) and one Redis. An element created through node A's REST
/// reaches raw Socket.IO clients on node B, each with B's own per-recipient `hasReacted`; the
/// originating socket (X-Socket-Id) is skipped on every node; with Redis killed REST and local
/// fan-out keep working, /health says degraded and the counters grow; with Redis back fan-out
/// resumes with no node restart.
///
/// Needs redis-server (scripts/test installs it under CI; `scripts/services.sh` exports
/// TOUCHSYNC_TEST_REDIS_URL, used for the test that does not kill Redis). Without it every test
/// here skips with the reason.
final class RedisClusterLiveTests: XCTestCase, @unchecked Sendable {
    // Invariant: XCTest runs setUp, the test and tearDown of one instance one after another.
    var nodes: [LiveServer] = []
    var ownRedis: RedisTestServer?
    var clients: [RawWebSocketClient] = []
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString)")

    override func tearDown() async throws {
        clients = []  // closed when released (RawTCPClient.deinit)
        for n in nodes { await n.stop() }
        nodes = []
        ownRedis?.kill()
        ownRedis = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// The shared Redis of scripts/services.sh, else one of our own, else a visible skip.
    func sharedRedisURL() throws -> String {
        if let url = ProcessInfo.processInfo.environment["TOUCHSYNC_TEST_REDIS_URL"], !url.isEmpty { return url }
        return try ownRedisServer().url
    }

    func ownRedisServer() throws -> RedisTestServer {
        if let why = RedisTestServer.unavailableReason {
            throw XCTSkip("SKIPPED (cross-node fan-out live tests): \(why); TOUCHSYNC_TEST_REDIS_URL is not set either")
        }
        let r = try RedisTestServer()
        ownRedis = r
        return r
    }

    func startNodes(_ count: Int, redisURL: String, overrides: [[String: JSONValue]] = []) throws -> [LiveServer] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A channel of this test's own: the shared Redis may serve other tests at the same time.
        let prefix = "test-\(UUID().uuidString.prefix(8))"
        for i in 0..<count {
            var o: [String: JSONValue] = [
                "database.path": .string(directory.appendingPathComponent("cluster.sqlite").path),
                "realtime.redisUrl": .string(redisURL), "realtime.redis.channelPrefix": .string(prefix),
                "realtime.redis.reconnectMinDelay": "20ms", "realtime.redis.reconnectMaxDelay": "250ms", "realtime.redis.pingInterval": "1s",
            ]
            if i < overrides.count { for (k, v) in overrides[i] { o[k] = v } }
            nodes.append(try LiveServer(overrides: o))
        }
        return nodes
    }

    func health(_ node: LiveServer) async throws -> JSONValue {
        try await APIClient(base: node.base).get("/health").json
    }

    func metric(_ node: LiveServer, _ line: String) async throws -> Double {
        let text = String(decoding: try await APIClient(base: node.base).get("/metrics").body, as: UTF8.self)
        for l in text.split(separator: "\n") where l.hasPrefix(line + " ") { return Double(l.split(separator: " ").last ?? "") ?? -1 }
        return -1
    }

    /// Waits up to `seconds` until `condition` holds (TSTestSupport's `until`).
    func eventually(_ what: String, seconds: Double = 15, _ condition: () async throws -> Bool) async throws {
        if try await !until(timeout: .milliseconds(Int(seconds * 1000)), condition) {
            XCTFail("timed out waiting for: \(what)"); throw TestServerError("timed out: \(what)")
        }
    }

    func waitRedisOK(_ nodes: [LiveServer]) async throws {
        for n in nodes {
            try await eventually("node :\(n.port) connected to Redis") { try await self.health(n)["redis"]?.stringValue == "ok" }
        }
    }

    /// A raw Socket.IO client over WebSocket on `node`, authenticated, joined to `roomId`; returns it and its sid.
    func socket(_ node: LiveServer, token: String, roomId: String) throws -> (RawWebSocketClient, String) {
        let ws = try RawWebSocketClient(port: node.port, timeoutSeconds: 10)
        clients.append(ws)
        try ws.handshake(path: "/socket.io/?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { throw TestServerError("no Engine.IO open packet") }
        ws.send("40" + JSONValue.object(["token": .string(token)]).serializedString())
        guard case .text(let connected) = ws.receive(), connected.hasPrefix("40"),
              let sid = (try? JSONValue.parse(String(connected.dropFirst(2))))?["sid"]?.stringValue else {
            throw TestServerError("no CONNECT answer")
        }
        ws.send("421" + JSONValue.array(["room:join", .object(["roomId": .string(roomId)])]).serializedString())
        while true {
            guard case .text(let t) = ws.receiveSkippingPings(timeout: 10) else { throw TestServerError("no room:join ack") }
            if t.hasPrefix("431") { break }
        }
        return (ws, sid)
    }

    /// The next event named `name` on `ws` (others skipped), as its first argument.
    func next(_ ws: RawWebSocketClient, _ name: String, timeout: Double = 10) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard case .text(let t) = ws.receiveSkippingPings(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { return nil }
            guard t.hasPrefix("42"), let packet = try? JSONValue.parse(String(t.dropFirst(2))), packet[0]?.stringValue == name else { continue }
            return packet[1]
        }
        return nil
    }

    struct Setup {
        let alice: TestUser
        let bob: TestUser
        let roomId: String
    }

    func users(on node: LiveServer) async throws -> Setup {
        let api = APIClient(base: node.base)
        let n = UInt32.random(in: 0...UInt32.max)
        let alice = try await api.register("alice\(n)")
        let bob = try await api.register("bob\(n)")
        let r = try await api.post("/api/rooms", ["memberIds": [.string(bob.id)]], token: alice.token)
        XCTAssertEqual(r.status, 201)
        guard let roomId = r.json["data"]?["id"]?.stringValue else { throw TestServerError("room not created: \(r.status)") }
        return Setup(alice: alice, bob: bob, roomId: roomId)
    }

    /// Two nodes on the Redis at `redisURL`, both connected to it, and alice and bob (registered on
    /// the first, `a`) in one room.
    func twoNodesWithUsers(redisURL: String, overrides: [[String: JSONValue]] = []) async throws -> (a: LiveServer, b: LiveServer, s: Setup) {
        let nodes = try startNodes(2, redisURL: redisURL, overrides: overrides)
        try await waitRedisOK(nodes)
        return (nodes[0], nodes[1], try await users(on: nodes[0]))
    }

    func createElement(_ node: LiveServer, _ s: Setup, content: String, originSocket: String? = nil) async throws -> String {
        let r = try await APIClient(base: node.base).post("/api/rooms/\(s.roomId)/elements",
                                                          ["type": "note", "content": .string(content), "positionX": 1, "positionY": 2,
                                                           "width": 100, "height": 100],
                                                          token: s.alice.token, headers: originSocket.map { ["X-Socket-Id": $0] } ?? [:])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        guard let id = r.json["data"]?["id"]?.stringValue else { throw TestServerError("element not created: \(r.status)") }
        return id
    }

    func testEventFromNodeAReachesNodeBWithPerRecipientHasReactedAndSkipsTheOriginSocket() async throws {
        let (a, b, s) = try await twoNodesWithUsers(redisURL: try sharedRedisURL())

        let (bobOnB, _) = try socket(b, token: s.bob.token, roomId: s.roomId)
        let (aliceOnB, _) = try socket(b, token: s.alice.token, roomId: s.roomId)
        let (originOnB, originSid) = try socket(b, token: s.alice.token, roomId: s.roomId)
        let (bobOnA, _) = try socket(a, token: s.bob.token, roomId: s.roomId)

        // Created through node A's REST by the socket `originSid` (on node B): everyone else gets it, once.
        let first = try await createElement(a, s, content: "from A", originSocket: originSid)
        for (ws, who) in [(bobOnB, "bob on B"), (aliceOnB, "alice's other socket on B"), (bobOnA, "bob on A (local)")] {
            let created = next(ws, "element:created")
            XCTAssertEqual(created?["element"]?["id"]?.stringValue, first, "\(who) got element:created from node A")
            XCTAssertEqual(created?["element"]?["content"]?.stringValue, "from A")
        }

        // Alice hearts it on A: B computes hasReacted per recipient (bob: false; alice: true).
        let toggle = try await APIClient(base: a.base).post("/api/rooms/\(s.roomId)/elements/\(first)/reactions/toggle", nil, token: s.alice.token)
        XCTAssertEqual(toggle.status, 200, String(decoding: toggle.body, as: UTF8.self))
        let forBob = next(bobOnB, "element:reaction:added")
        let forAlice = next(aliceOnB, "element:reaction:added")
        XCTAssertEqual(forBob?["elementId"]?.stringValue, first)
        XCTAssertEqual(forBob?["stats"]?["hasReacted"]?.boolValue, false, "bob on B has not reacted")
        XCTAssertEqual(forBob?["stats"]?["totalReactions"]?.intValue, 1)
        XCTAssertEqual(forAlice?["stats"]?["hasReacted"]?.boolValue, true, "alice on B has reacted")
        XCTAssertEqual(next(bobOnA, "element:reaction:added")?["stats"]?["hasReacted"]?.boolValue, false)

        // The origin socket skipped the first element: the first element:created it sees is the
        // second one (no X-Socket-Id), and it saw the reaction of the toggle (not its own).
        let second = try await createElement(a, s, content: "second")
        XCTAssertEqual(next(originOnB, "element:created")?["element"]?["id"]?.stringValue, second,
                       "the originating socket did not get its own element:created from the other node")
        XCTAssertEqual(next(bobOnB, "element:created")?["element"]?["id"]?.stringValue, second)

        // The counters move when Redis's reply (or the node's own echo) is read, which may come just
        // after another node already delivered the event: wait for them rather than race them.
        try await eventually("node A counted 3 published events") {
            try await self.metric(a, "touchsync_redis_publishes_total{outcome=\"published\"}") >= 3
        }
        try await eventually("node B delivered 3 events from node A") {
            try await self.metric(b, "touchsync_redis_received_total{outcome=\"delivered\"}") >= 3
        }
        try await eventually("node A skipped its own 3 events (a node skips its own events)") {
            try await self.metric(a, "touchsync_redis_received_total{outcome=\"own\"}") >= 3
        }
    }

    func testRedisDownKeepsRESTAndLocalFanOutThenFanOutResumesWithoutARestart() async throws {
        let redis = try ownRedisServer()
        let (a, b, s) = try await twoNodesWithUsers(redisURL: redis.url, overrides: [["realtime.redis.maxPendingPublishes": 2]])
        let (bobOnB, _) = try socket(b, token: s.bob.token, roomId: s.roomId)
        let (bobOnA, _) = try socket(a, token: s.bob.token, roomId: s.roomId)
        let before = try await createElement(a, s, content: "before")
        XCTAssertEqual(next(bobOnB, "element:created")?["element"]?["id"]?.stringValue, before)
        XCTAssertEqual(next(bobOnA, "element:created")?["element"]?["id"]?.stringValue, before)

        redis.kill()
        try await eventually("node A reports degraded") { try await self.health(a)["status"]?.stringValue == "degraded" }
        let h = try await health(a)
        XCTAssertEqual(h["redis"]?.stringValue, "down")
        XCTAssertEqual(h["database"]?.stringValue, "ok")
        XCTAssertTrue(h["degradedReason"]?.stringValue?.contains("redis") ?? false, h.serializedString())
        let healthStatus = try await APIClient(base: a.base).get("/health").status
        XCTAssertEqual(healthStatus, 200, "the node still serves")
        let v4 = try await metric(a, "touchsync_redis_up")
        XCTAssertEqual(v4, 0)

        // REST keeps working, local sockets keep getting events; past 2 waiting publishes the rest are dropped and counted.
        var whileDown: [String] = []
        for i in 0..<5 { whileDown.append(try await createElement(a, s, content: "down \(i)")) }
        for id in whileDown { XCTAssertEqual(next(bobOnA, "element:created")?["element"]?["id"]?.stringValue, id, "local fan-out while Redis is down") }
        try await eventually("3 publishes dropped") { try await self.metric(a, "touchsync_redis_publishes_total{outcome=\"dropped\"}") >= 3 }
        let v5 = try await metric(a, "touchsync_redis_publish_queue_depth")
        XCTAssertEqual(v5, 2)

        // Redis is back on the same port: no node restart, fan-out resumes.
        try redis.start()
        try await waitRedisOK([a, b])
        let v6 = try await metric(a, "touchsync_redis_reconnects_total")
        XCTAssertGreaterThanOrEqual(v6, 2)
        let v7 = try await metric(b, "touchsync_redis_reconnects_total")
        XCTAssertGreaterThanOrEqual(v7, 1)
        let after = try await createElement(a, s, content: "after")
        var seen: [String] = []
        while let e = next(bobOnB, "element:created")?["element"]?["id"]?.stringValue {
            seen.append(e)
            if e == after { break }
        }
        XCTAssertEqual(seen.last, after, "an element created after Redis came back reaches node B")
        XCTAssertTrue(Set(seen.dropLast()).isSubset(of: Set(whileDown.prefix(2))), "only the 2 queued events may arrive late, never the dropped ones: \(seen)")
        let v8 = try await metric(a, "touchsync_redis_publish_queue_depth")
        XCTAssertEqual(v8, 0)
    }

    func testLogoutOnNodeADisconnectsTheUsersSocketsOnNodeB() async throws {
        let (a, b, s) = try await twoNodesWithUsers(redisURL: try sharedRedisURL())
        let (bobOnB, _) = try socket(b, token: s.bob.token, roomId: s.roomId)
        let (aliceOnB, _) = try socket(b, token: s.alice.token, roomId: s.roomId)
        let r = try await APIClient(base: a.base).post("/api/auth/logout", nil, token: s.bob.token)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        // Socket.IO DISCONNECT ("41") or the transport closing: bob's socket on B is gone.
        var gone = false
        for _ in 0..<50 where !gone {
            switch bobOnB.receiveSkippingPings(timeout: 0.2) {
            case .text(let t) where t.hasPrefix("41"): gone = true
            case .close: gone = true
            default: break
            }
        }
        XCTAssertTrue(gone, "bob's socket on node B was disconnected by his logout on node A")
        // Alice's socket on B is untouched: it still gets events from A.
        let id = try await createElement(a, s, content: "still here")
        XCTAssertEqual(next(aliceOnB, "element:created")?["element"]?["id"]?.stringValue, id)
    }

    func testWithoutRedisUrlNothingConnectsAndHealthHasNoRedisField() async throws {
        let node = try LiveServer()
        nodes.append(node)
        XCTAssertNil(node.server.redisBridge)
        let h = try await health(node)
        XCTAssertEqual(h["status"]?.stringValue, "ok")
        XCTAssertNil(h["redis"])
        let text = String(decoding: try await APIClient(base: node.base).get("/metrics").body, as: UTF8.self)
        XCTAssertFalse(text.contains("touchsync_redis_"))
    }

    func testABadRedisUrlStopsTheStartWithAClearError() throws {
        XCTAssertThrowsError(try LiveServer(overrides: ["realtime.redisUrl": "http://127.0.0.1:6379"])) { error in
            XCTAssertTrue("\(error)".contains("realtime.redisUrl"), "\(error)")
        }
    }
}
