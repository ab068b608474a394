import Foundation
import Logging
import TSRedis
import TSSockets
import TSTestSupport
import XCTest

/// The client against a real redis-server the test owns (its own port): messages flow between
/// two clients in publish order; with Redis killed publishes queue up to the bound and the rest
/// are dropped and counted; with Redis back both connections recover by themselves (SUBSCRIBE
/// again) and messages flow again.
// @unchecked Sendable: no stored state; XCTest runs each test on one task.
final class RedisPubSubLiveTests: XCTestCase, @unchecked Sendable {
    /// Collects received payloads (the client's loop thread adds, the test reads).
    final class Inbox: @unchecked Sendable {
        // Invariant: `items` is only touched under `lock`.
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ b: [UInt8]) { lock.lock(); items.append(String(decoding: b, as: UTF8.self)); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func makeServer() throws -> RedisTestServer {
        if let why = RedisTestServer.unavailableReason { throw XCTSkip("SKIPPED (Redis live tests): \(why)") }
        return try RedisTestServer()
    }

    func client(_ server: RedisTestServer, inbox: Inbox, maxPending: Int = 10_000) throws -> RedisPubSub {
        var c = RedisConfiguration(url: try RedisURL(parsing: server.url))
        c.reconnectMinDelay = .milliseconds(20)
        c.reconnectMaxDelay = .milliseconds(200)
        c.pingInterval = .milliseconds(500)
        c.maxPendingPublishes = maxPending
        return try RedisPubSub(configuration: c, channel: "test:\(server.port)", logger: Logger(label: "test.redis")) { inbox.add($0) }
    }

    /// Waits up to `seconds` for `condition` (TSTestSupport's `until`).
    func eventually(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
        if !(await until(timeout: .milliseconds(Int(seconds * 1000)), condition)) { XCTFail("timed out waiting for: \(what)") }
    }

    func testMessagesFlowInOrderAndSurviveARedisRestart() async throws {
        let server = try makeServer()
        let inboxA = Inbox(), inboxB = Inbox()
        let a = try client(server, inbox: inboxA, maxPending: 250)
        let b = try client(server, inbox: inboxB)
        a.start(); b.start()
        try await eventually("both clients ready") { a.stats.snapshot.healthy && b.stats.snapshot.healthy }

        for i in 0..<200 { a.publish(Array("m\(i)".utf8)) }
        try await eventually("200 messages at B") { inboxB.all.count >= 200 }
        XCTAssertEqual(inboxB.all, (0..<200).map { "m\($0)" }, "in publish order")
        try await eventually("a subscriber also sees its own messages (the bridge skips them by node id)") { inboxA.all.count == 200 }
        try await eventually("answers counted") { a.stats.snapshot.published == 200 }

        // Redis dies: both notice, publishes wait up to the bound (250), the rest are dropped and counted.
        server.kill()
        try await eventually("down noticed") { !a.stats.snapshot.publisherReady && !b.stats.snapshot.subscriberReady }
        XCTAssertNotNil(a.stats.snapshot.lastError)
        for i in 0..<253 { a.publish(Array("down\(i)".utf8)) }
        try await eventually("3 dropped") { a.stats.snapshot.publishDropped == 3 }
        XCTAssertEqual(a.stats.snapshot.pending, 250)

        // Redis is back on the same port: both reconnect by themselves; the queue is flushed in order.
        try server.start()
        try await eventually("both reconnected") { a.stats.snapshot.healthy && b.stats.snapshot.healthy }
        XCTAssertGreaterThanOrEqual(a.stats.snapshot.reconnects, 2, "publisher and subscriber of A reconnected")
        try await eventually("queued publishes answered") { a.stats.snapshot.published == 450 && a.stats.snapshot.pending == 0 }
        a.publish(Array("after".utf8))
        try await eventually("a message after the restart arrives at B (SUBSCRIBE sent again)") { inboxB.all.last == "after" }
        let afterRestart = inboxB.all.dropFirst(200)
        let queuedSeen = afterRestart.filter { $0.hasPrefix("down") }
        XCTAssertEqual(queuedSeen, Array((0..<250).map { "down\($0)" }.suffix(queuedSeen.count)),
                       "queued messages that arrived came in order, none of the dropped ones")

        await a.stop()
        await b.stop()
    }

    func testAConnectionToNothingKeepsRetryingAndReportsWhy() async throws {
        if let why = RedisTestServer.unavailableReason { throw XCTSkip("SKIPPED (Redis live tests): \(why)") }
        let port = TestSockets.freeLoopbackPort()
        var c = RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port))
        c.reconnectMinDelay = .milliseconds(10)
        c.reconnectMaxDelay = .milliseconds(50)
        let inbox = Inbox()
        let client = try RedisPubSub(configuration: c, channel: "x", logger: Logger(label: "test.redis")) { inbox.add($0) }
        client.start()
        try await eventually("an error recorded") { client.stats.snapshot.lastError != nil }
        XCTAssertFalse(client.stats.snapshot.healthy)
        XCTAssertTrue(client.stats.snapshot.lastError?.contains("connect") ?? false || client.stats.snapshot.lastError?.contains("closed") ?? false,
                      client.stats.snapshot.lastError ?? "")
        // Redis appears on that port later: the client finds it without a restart, and SUBSCRIBEs.
        let server = try RedisTestServer(port: port)
        try await eventually("connected once Redis is there") { client.stats.snapshot.healthy }
        client.publish(Array("hello".utf8))
        try await eventually("own message received") { inbox.all == ["hello"] }
        await client.stop()
        server.kill()
    }
}
