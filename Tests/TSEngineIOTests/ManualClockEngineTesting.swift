import Logging
import TSHTTP
import TSJSON
import TSSockets
import XCTest
@testable import TSEngineIO

/// The helpers of the tests that hand requests straight to `EngineIOServer.handle(_:)` (no
/// socket) while its timers run on a loop whose clock is a `ManualClock`: time moves only when
/// the test advances it.
protocol ManualClockEngineTesting {}

extension ManualClockEngineTesting {
    /// One millisecond of the manual clock.
    var ms: UInt64 { 1_000_000 }

    /// An engine (`pingInterval`, `pingTimeout`) whose timers run on a new loop of a new
    /// manual clock; the caller shuts the loop down.
    func manualClockEngine(pingInterval: Duration, pingTimeout: Duration) throws -> (clock: ManualClock, loop: EventLoop, engine: EngineIOServer) {
        let clock = ManualClock()
        let loop = try EventLoop(clock: clock)
        do {
            let engine = try EngineIOServer(configuration: EngineIOConfiguration(pingInterval: pingInterval, pingTimeout: pingTimeout),
                                            clock: clock, timerLoop: loop, logger: Logger(label: "test"))
            return (clock, loop, engine)
        } catch {
            loop.shutdown()
            throw error
        }
    }

    /// A request to the Engine.IO path with `query`.
    func request(_ method: HTTPMethod, _ query: String, body: String = "") -> HTTPRequest {
        HTTPRequest(method: method, target: "/socket.io/?\(query)", body: Array(body.utf8))
    }

    /// Lets the loop run its expired timers at the manual clock's time.
    /// (Timers expire before queued tasks run within a loop turn.)
    func settle(_ loop: EventLoop) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in loop.execute { c.resume() } }
    }
}
