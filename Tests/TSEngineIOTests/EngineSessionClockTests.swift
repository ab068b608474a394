import Logging
import TSHTTP
import TSJSON
import TSSockets
import XCTest
@testable import TSEngineIO

/// Session heartbeat driven by a ManualClock: the session's timer runs on an EventLoop whose
/// clock is the manual one, so time only moves when the test says so (no sleeping for
/// pingInterval/pingTimeout). Requests go straight to `handle(_:)`.
final class EngineSessionClockTests: XCTestCase, ManualClockEngineTesting {
    func testPingThenTimeoutOnManualClock() async throws {
        let (clock, loop, engine) = try manualClockEngine(pingInterval: .seconds(25), pingTimeout: .seconds(20))
        defer { loop.shutdown() }
        let open = await engine.handle(request(.GET, "EIO=4&transport=polling"))
        let sid = try XCTUnwrap(try JSONValue.parse(Array(open.body.dropFirst()))["sid"]?.stringValue)
        let session = try XCTUnwrap(engine.session(id: sid))

        clock.advance(by: 24_999 * ms)
        await settle(loop)
        XCTAssertFalse(session.isClosed)
        clock.advance(by: 1 * ms)
        await settle(loop)
        // The ping is queued: the next GET returns it at once.
        let ping = await engine.handle(request(.GET, "EIO=4&transport=polling&sid=\(sid)"))
        XCTAssertEqual(String(decoding: ping.body, as: UTF8.self), "2")

        clock.advance(by: 10_000 * ms)
        let pong = await engine.handle(request(.POST, "EIO=4&transport=polling&sid=\(sid)", body: "3"))
        XCTAssertEqual(pong.status, 200)
        // The next ping is due one interval after the pong; without a pong the session closes
        // pingTimeout after it.
        clock.advance(by: 25_000 * ms)
        await settle(loop)
        XCTAssertFalse(session.isClosed)
        clock.advance(by: 19_999 * ms)
        await settle(loop)
        XCTAssertFalse(session.isClosed)
        clock.advance(by: 1 * ms)
        await settle(loop)
        XCTAssertTrue(session.isClosed)
        let after = await engine.handle(request(.GET, "EIO=4&transport=polling&sid=\(sid)"))
        XCTAssertEqual(after.status, 400)
        XCTAssertNil(engine.session(id: sid))
    }
}

final class EngineIOPathTests: XCTestCase {
    func testRequestsOutsideTheConfiguredPathAreRefused() async throws {
        var config = EngineIOConfiguration()
        config.path = "/engine.io/"
        let engine = try EngineIOServer(configuration: config, logger: Logger(label: "test"))
        let outside = await engine.handle(HTTPRequest(method: .GET, target: "/socket.io/?EIO=4&transport=polling"))
        XCTAssertEqual(outside.status, 404)
        let inside = await engine.handle(HTTPRequest(method: .GET, target: "/engine.io/?EIO=4&transport=polling"))
        XCTAssertEqual(inside.status, 200)
        engine.closeAll()
    }
}
