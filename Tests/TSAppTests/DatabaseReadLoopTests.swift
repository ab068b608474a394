import Foundation
import TSApp
import TSJSON
import TSStorage
import TSTestSupport
import XCTest

/// An event loop never waits for the database. With ONE event loop and every
/// reader connection held busy, a request that needs a read waits (suspended) while `/health`
/// and a WebSocket ping on that same loop are answered at once; past `database.maxQueuedReads`
/// waiting reads, requests get 503.
final class DatabaseReadLoopTests: XCTestCase {
    /// Holds a read on its reader thread until the test opens it.
    final class Gate: @unchecked Sendable {
        // Invariant: `isOpen` and `waiting` are only touched with `condition` locked.
        private let condition = NSCondition()
        private var isOpen = false
        private var waiting = 0
        func pass() {
            condition.lock()
            waiting += 1
            while !isOpen { condition.wait() }
            condition.unlock()
        }
        func release() { condition.lock(); isOpen = true; condition.broadcast(); condition.unlock() }
        var waiters: Int { condition.lock(); defer { condition.unlock() }; return waiting }
    }

    func startServer(readers: Int, maxQueuedReads: Int = 1024) throws -> LiveServer {
        let dir = NSTemporaryDirectory() + "ts-readloop-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return try LiveServer(overrides: ["database.path": .string(dir + "/db.sqlite"), "database.readers": .int(Int64(readers)),
                                          "database.maxQueuedReads": .int(Int64(maxQueuedReads)), "server.eventLoops": 1])
    }

    struct NeverHappened: Error { let what: String }

    func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        guard await until(condition) else { throw NeverHappened(what: what) }
    }

    /// Runs `body` against a fresh server and stops it afterwards, whatever happened.
    func withServer(readers: Int, maxQueuedReads: Int = 1024, _ body: (LiveServer) async throws -> Void) async throws {
        let live = try startServer(readers: readers, maxQueuedReads: maxQueuedReads)
        do { try await body(live) } catch {
            await live.stop()
            throw error
        }
        await live.stop()
    }

    /// Sends a request on a fresh connection and returns the client without reading the answer.
    func send(_ port: Int, _ target: String, token: String) throws -> RawTCPClient {
        let client = try RawTCPClient(port: port, timeoutSeconds: 10)
        _ = client.write("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        return client
    }

    func testHealthAndWebSocketPingAnswerWhileEveryReaderIsBusy() async throws { try await withServer(readers: 2) { live in
        let user = try await APIClient(base: live.base).register("alice")

        // A Socket.IO client over WebSocket, connected (its CONNECT needed a read) before the readers are taken.
        let ws = try RawWebSocketClient(port: live.port)
        try ws.handshake(path: "/socket.io/?EIO=4&transport=websocket")
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { return XCTFail("no Engine.IO open packet") }
        ws.send("40" + JSONValue.object(["token": .string(user.token)]).serializedString())
        guard case .text(let connected) = ws.receive(), connected.hasPrefix("40{") else { return XCTFail("no Socket.IO CONNECT answer") }

        // Every reader busy with a read that does not end until the gate opens.
        let gate = Gate()
        let db = live.server.db
        let holders = (0..<2).map { _ in Task { try await db.read { _ in gate.pass() } } }
        try await waitUntil("both readers held") { gate.waiters == 2 }

        // A request that needs a read: it must wait for a reader, on the one event loop.
        let waiting = try send(live.port, "/api/rooms/my-rooms", token: user.token)
        try await waitUntil("the my-rooms read queued") { db.readPool.queued >= 1 }

        // The same loop still answers /health and a WebSocket ping at once. (Before: the loop
        // thread itself sat in the reader pool's condition wait, and both timed out.)
        let health = RawHTTP.request(port: live.port, "GET", "/health")
        XCTAssertEqual(health.status, 200, health.text)
        XCTAssertEqual((try? JSONValue.parse(health.body))?["status"]?.stringValue, "ok", "a busy pool is a working database")
        ws.setReceiveTimeout(3)
        ws.sendFrame(opcode: 0x9, Array("still there?".utf8))
        var pong: RawWebSocketFrame?
        while let frame = ws.nextFrame() {
            if frame.opcode == 0xA { pong = frame; break }  // skip Engine.IO pings (text "2")
        }
        XCTAssertEqual(pong.map { String(decoding: $0.payload, as: UTF8.self) }, "still there?", "the pong came back while the readers were busy")
        // A request needing no database on the same loop too.
        let openapi = RawHTTP.request(port: live.port, "GET", "/openapi.json")
        XCTAssertEqual(openapi.status, 200)

        // The waiting request is answered once a reader is free.
        waiting.setReceiveTimeout(0.2)
        XCTAssertEqual(waiting.read(maxBytes: 1024), .timedOut, "my-rooms is still waiting for a reader")
        gate.release()
        for h in holders { try await h.value }
        waiting.setReceiveTimeout(10)
        let answer = RawHTTP.parse(waiting.readUntilClose())
        XCTAssertEqual(answer?.response.status, 200)
        withExtendedLifetime(ws) {}
    } }

    func testPastTheReadQueueBoundRequestsGet503() async throws { try await withServer(readers: 1, maxQueuedReads: 1) { live in
        let user = try await APIClient(base: live.base).register("alice")
        let gate = Gate()
        let db = live.server.db
        let holder = Task { try await db.read { _ in gate.pass() } }
        try await waitUntil("the reader held") { gate.waiters == 1 }

        let queued = try send(live.port, "/api/rooms/my-rooms", token: user.token)
        try await waitUntil("one read queued") { db.readPool.queued == 1 }
        let refused = RawHTTP.request(port: live.port, "GET", "/api/rooms/my-rooms", headers: ["Authorization": "Bearer \(user.token)"])
        XCTAssertEqual(refused.status, 503, refused.text)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual((try? JSONValue.parse(refused.body))?["error"]?["code"]?.stringValue, "UNAVAILABLE")
        XCTAssertGreaterThanOrEqual(db.readPool.rejected, 1)

        gate.release()
        try await holder.value
        queued.setReceiveTimeout(10)
        XCTAssertEqual(RawHTTP.parse(queued.readUntilClose())?.response.status, 200, "the queued request is served")
        let after = RawHTTP.request(port: live.port, "GET", "/api/rooms/my-rooms", headers: ["Authorization": "Bearer \(user.token)"])
        XCTAssertEqual(after.status, 200)
    } }
}
