import Foundation
import Logging
import TSRedis
import TSSockets
import TSTestSupport
import XCTest

/// How the client fails and recovers: AUTH with the URL's password (a wrong one is a refused
/// handshake with Redis's reason, retried with backoff), a server that accepts but never answers
/// (the total connect deadline), and the bounded queue while disconnected (runs without Redis).
// @unchecked Sendable: no stored state; XCTest runs each test on one task.
final class RedisLinkFailureTests: XCTestCase, @unchecked Sendable {
    func eventually(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
        if !(await until(timeout: .milliseconds(Int(seconds * 1000)), condition)) { XCTFail("timed out waiting for: \(what)") }
    }

    func client(_ url: String, connectTimeout: Duration = .seconds(5), received: LockedValue<[String]>) throws -> RedisPubSub {
        var c = RedisConfiguration(url: try RedisURL(parsing: url))
        c.reconnectMinDelay = .milliseconds(20)
        c.reconnectMaxDelay = .milliseconds(100)
        c.connectTimeout = connectTimeout
        return try RedisPubSub(configuration: c, channel: "auth-test", logger: Logger(label: "test.redis")) { payload in
            received.withLock { $0.append(String(decoding: payload, as: UTF8.self)) }
        }
    }

    func testPasswordFromTheURLIsSentAndAWrongOneIsRefusedWithRedissReason() async throws {
        if let why = RedisTestServer.unavailableReason { throw XCTSkip("SKIPPED (Redis live tests): \(why)") }
        let server = try RedisTestServer(extraArguments: ["--requirepass", "s3cret"])
        let received = LockedValue<[String]>([])

        let good = try client("redis://:s3cret@127.0.0.1:\(server.port)", received: received)
        good.start()
        try await eventually("authenticated client ready") { good.stats.snapshot.healthy }
        good.publish(Array("authed".utf8))
        try await eventually("message through an authenticated connection") { received.current == ["authed"] }

        let wrong = try client("redis://:nope@127.0.0.1:\(server.port)", received: received)
        wrong.start()
        try await eventually("refusal recorded") { wrong.stats.snapshot.lastError?.contains("handshake refused") ?? false }
        XCTAssertFalse(wrong.stats.snapshot.healthy)
        let reason = wrong.stats.snapshot.lastError ?? ""
        XCTAssertTrue(reason.contains("WRONGPASS") || reason.contains("invalid"), reason)
        XCTAssertFalse(reason.contains("nope"), "the password is never logged")

        let none = try client("redis://127.0.0.1:\(server.port)", received: received)
        none.start()
        try await eventually("NOAUTH recorded") { none.stats.snapshot.lastError?.contains("NOAUTH") ?? false }

        await good.stop(); await wrong.stop(); await none.stop()
        server.kill()
    }

    func testAServerThatNeverAnswersFailsAtTheConnectDeadlineAndIsRetried() async throws {
        // A listening socket nobody accepts from: the kernel completes the TCP handshake, no byte ever comes back.
        let listener = try Socket.makeListener(host: "127.0.0.1", port: 0, backlog: 16)
        defer { listener.close() }
        let port = try listener.localPort()
        let received = LockedValue<[String]>([])
        let c = try client("redis://127.0.0.1:\(port)", connectTimeout: .milliseconds(200), received: received)
        c.start()
        try await eventually("deadline reported") { c.stats.snapshot.lastError?.contains("no ready connection within") ?? false }
        XCTAssertFalse(c.stats.snapshot.healthy)
        XCTAssertEqual(c.stats.snapshot.reconnects, 0)
        await c.stop()
    }

    func testWhileDisconnectedPublishesQueueUpToTheBoundAndAnOversizedOneIsDropped() async throws {
        // Nothing listens on this port: the client stays disconnected, retrying.
        let port = TestSockets.freeLoopbackPort()
        var c = RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port))
        c.reconnectMinDelay = .milliseconds(50)
        c.maxPendingPublishes = 3
        c.maxPendingBytes = 1 << 20
        c.maxMessageBytes = 1024
        let client = try RedisPubSub(configuration: c, channel: "bound", logger: Logger(label: "test.redis")) { _ in }
        client.start()
        client.publish([UInt8](repeating: 0x61, count: 1025))  // over maxMessageBytes: never queued
        for i in 0..<5 { client.publish(Array("m\(i)".utf8)) }  // 3 queue, 2 are dropped
        try await eventually("drops counted") { client.stats.snapshot.publishDropped == 3 }
        XCTAssertEqual(client.stats.snapshot.pending, 3, "the queue holds exactly maxPendingPublishes")
        XCTAssertEqual(client.stats.snapshot.published, 0)
        await client.stop()
    }
}
