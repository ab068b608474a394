import Logging
import TSHTTP
import TSJSON
import TSSockets
import XCTest
@testable import TSEngineIO

/// Every session's heartbeat on one timer (`EngineSessionTimers`, less memory per idle socket): each session
/// still gets its ping at its own deadline and is closed at its own pong deadline, and a closed
/// session leaves the timers at once.
final class EngineSessionTimersTests: XCTestCase, ManualClockEngineTesting {
    func queueEmpty(_ s: EngineIOSession) -> Bool { s.lock.withLock { s.state.machine.queueIsEmpty } }

    func open(_ engine: EngineIOServer) async throws -> EngineIOSession {
        let open = await engine.handle(request(.GET, "EIO=4&transport=polling"))
        let sid = try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue)
        return try XCTUnwrap(engine.session(id: sid))
    }

    func testEachSessionKeepsItsOwnDeadlinesOnTheSharedTimer() async throws {
        let (clock, loop, engine) = try manualClockEngine(pingInterval: .seconds(1), pingTimeout: .milliseconds(500))
        defer { loop.shutdown() }
        // Three sessions opened 100 ms apart: pings due at 1000, 1100, 1200 ms.
        var sessions: [EngineIOSession] = []
        for i in 0..<3 {
            if i > 0 { clock.advance(by: 100 * ms) }
            sessions.append(try await open(engine))
        }
        XCTAssertEqual(engine.sessionContext.timers.count, 3)
        // Takes the queued ping with a GET (never parks: an empty queue answers false at once).
        func pingQueued(_ s: EngineIOSession) async -> Bool {
            guard !queueEmpty(s) else { return false }
            let r = await engine.handle(request(.GET, "EIO=4&transport=polling&sid=\(s.id)"))
            return String(decoding: r.body, as: UTF8.self) == "2"
        }
        clock.advance(by: 799 * ms)  // t = 999 ms after the first
        await settle(loop)
        XCTAssertEqual(queueEmpty(sessions[0]), true)
        clock.advance(by: 1 * ms)  // 1000: only the first is due
        await settle(loop)
        let firstPinged = await pingQueued(sessions[0])
        XCTAssertTrue(firstPinged)
        XCTAssertTrue(queueEmpty(sessions[1]))
        clock.advance(by: 100 * ms)  // 1100: the second
        await settle(loop)
        let secondPinged = await pingQueued(sessions[1])
        XCTAssertTrue(secondPinged)
        XCTAssertTrue(queueEmpty(sessions[2]))
        // The first answers; the second does not and dies at 1100 + 500.
        let pong = await engine.handle(request(.POST, "EIO=4&transport=polling&sid=\(sessions[0].id)", body: "3"))
        XCTAssertEqual(pong.status, 200)
        clock.advance(by: 499 * ms)  // 1599
        await settle(loop)
        XCTAssertFalse(sessions[1].isClosed)
        clock.advance(by: 1 * ms)  // 1600
        await settle(loop)
        XCTAssertTrue(sessions[1].isClosed)
        XCTAssertFalse(sessions[0].isClosed)
        XCTAssertFalse(sessions[2].isClosed)  // pinged at 1200: its deadline is 1700
        // A closed session leaves the timers at once (nothing keeps it alive until its deadline).
        XCTAssertEqual(engine.sessionContext.timers.count, 2)
        sessions[0].close()
        XCTAssertEqual(engine.sessionContext.timers.count, 1)
        clock.advance(by: 100 * ms)  // 1700
        await settle(loop)
        XCTAssertTrue(sessions[2].isClosed)
        XCTAssertEqual(engine.sessionContext.timers.count, 0)
    }
}
