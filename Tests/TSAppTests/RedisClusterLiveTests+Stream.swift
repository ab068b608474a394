import Foundation
import TSApp
import TSJSON
import TSTestSupport
import XCTest

/// The stream transport (docs/realtime-cluster.md "Transport: a Redis stream"), over real sockets
/// with a real redis-server: a node whose reader was away while another node's events were
/// appended reads them afterwards, in order, once; pub/sub, on the same run, loses them.
extension RedisClusterLiveTests {
    /// Node A reconnects within 50 ms, node B only every 5 s: A's queued events are in Redis
    /// well before B is back. Redis keeps its data across the restart (append-only, fsync always).
    func catchUpRun(transport: String) async throws -> (expected: [String], seenOnB: [String], missedOnB: Double, bWasAway: Bool) {
        let redis = try RedisTestServer(extraArguments: ["--appendonly", "yes", "--appendfsync", "always"])
        ownRedis = redis
        let slow: [String: JSONValue] = ["realtime.redis.reconnectMinDelay": "5s", "realtime.redis.reconnectMaxDelay": "5s"]
        let nodes = try startNodes(2, redisURL: redis.url, overrides: [["realtime.redis.transport": .string(transport), "realtime.redis.reconnectMaxDelay": "50ms"],
                                                                        slow.merging(["realtime.redis.transport": .string(transport)]) { $1 }])
        let a = nodes[0], b = nodes[1]
        try await waitRedisOK(nodes)
        let s = try await users(on: a)
        let (bobOnB, _) = try socket(b, token: s.bob.token, roomId: s.roomId)
        var expected: [String] = []
        for i in 0..<3 { expected.append(try await createElement(a, s, content: "before \(i)")) }
        for id in expected { XCTAssertEqual(next(bobOnB, "element:created")?["element"]?["id"]?.stringValue, id) }

        redis.kill()
        try await eventually("node B reports degraded") { try await self.health(b)["status"]?.stringValue == "degraded" }
        for i in 0..<5 { expected.append(try await createElement(a, s, content: "while down \(i)")) }
        try redis.start()
        // A is back (and has appended its queue) before B's reader reconnects.
        try await eventually("node A appended what waited", seconds: 10) {
            let depth = try await self.metric(a, "touchsync_redis_publish_queue_depth")
            let up = try await self.health(a)["redis"]?.stringValue
            return depth == 0 && up == "ok"
        }
        let bWasAway = try await health(b)["redis"]?.stringValue == "down"
        try await eventually("node B reconnected", seconds: 20) { try await self.health(b)["redis"]?.stringValue == "ok" }
        for i in 0..<3 { expected.append(try await createElement(a, s, content: "after \(i)")) }
        var seen = Array(expected.prefix(3))
        while let e = next(bobOnB, "element:created", timeout: 5)?["element"]?["id"]?.stringValue {
            seen.append(e)
            if e == expected.last { break }
        }
        // A copy would arrive right behind: read until quiet.
        while let e = next(bobOnB, "element:created", timeout: 0.5)?["element"]?["id"]?.stringValue { seen.append(e) }
        return (expected, seen, try await metric(b, "touchsync_redis_missed_total"), bWasAway)
    }

    func testStreamReaderThatWasAwayReadsWhatWasAppendedMeanwhileInOrderOnce() async throws {
        let run = try await catchUpRun(transport: "stream")
        guard run.bWasAway else {
            throw XCTSkip("SKIPPED: node B reconnected before node A had appended what waited; this run proves no catch-up")
        }
        XCTAssertEqual(run.seenOnB, run.expected, "node B got every event of node A once, in commit order")
        XCTAssertEqual(run.missedOnB, 0)
    }

    /// The same run over pub/sub loses what was published while B was away, and B counts it
    /// from the gap in A's numbers: the difference the stream makes, measured on this machine.
    func testPubSubLosesWhatWasPublishedWhileTheSubscriberWasAwayAndCountsIt() async throws {
        let run = try await catchUpRun(transport: "pubsub")
        guard run.bWasAway else {
            throw XCTSkip("SKIPPED: node B reconnected before node A had published what waited; this run cannot show the loss")
        }
        let lost = Set(run.expected).subtracting(run.seenOnB)
        XCTAssertEqual(lost, Set(run.expected[3..<8]), "the five events published while B was away are lost to it")
        XCTAssertEqual(run.missedOnB, 5, "and counted from the gap in A's numbers")
    }

    /// A stream capped at about 10 entries (`MAXLEN ~` trims whole nodes of 100) while node B's
    /// reader is away and node A appends 300: B reads what is left and counts the rest as missed,
    /// from the jump in A's numbers; received plus missed is every event.
    func testAReaderLeftBehindByTrimmingCountsExactlyWhatItMissed() async throws {
        let redis = try ownRedisServer()
        let nodes = try startNodes(2, redisURL: redis.url, overrides: [
            ["realtime.redis.streamMaxLength": 10, "realtime.redis.reconnectMaxDelay": "50ms"],
            ["realtime.redis.streamMaxLength": 10, "realtime.redis.reconnectMinDelay": "5s", "realtime.redis.reconnectMaxDelay": "5s"],
        ])
        let a = nodes[0], b = nodes[1]
        try await waitRedisOK(nodes)
        let s = try await users(on: a)
        _ = try await createElement(a, s, content: "known")
        try await eventually("node B got node A's first event") {
            try await self.metric(b, "touchsync_redis_received_total{outcome=\"delivered\"}") >= 1
        }
        let delivered = try await metric(b, "touchsync_redis_received_total{outcome=\"delivered\"}")
        redis.kill()
        try await eventually("node B reports degraded") { try await self.health(b)["status"]?.stringValue == "degraded" }
        for i in 0..<300 { _ = try await createElement(a, s, content: "while B is away \(i)") }
        try redis.start()
        try await eventually("node A appended what waited", seconds: 10) {
            try await self.metric(a, "touchsync_redis_publish_queue_depth") == 0
        }
        guard try await health(b)["redis"]?.stringValue == "down" else {
            throw XCTSkip("SKIPPED: node B reconnected before node A had appended the 300 events; nothing was trimmed past it")
        }
        try await eventually("node B reconnected", seconds: 20) { try await self.health(b)["redis"]?.stringValue == "ok" }
        _ = try await createElement(a, s, content: "after")
        try await eventually("node B read on and counted the gap") {
            let got = try await self.metric(b, "touchsync_redis_received_total{outcome=\"delivered\"}") - delivered
            let missed = try await self.metric(b, "touchsync_redis_missed_total")
            return got + missed == 301 && missed > 0
        }
    }
}
