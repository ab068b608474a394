import Foundation
import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets
import TSSocketIO

/// A real Socket.IO server on a real HTTP server on port 0, for the live Socket.IO tests: one
/// set-up for all of them, so that what differs between test classes (ping timings, namespaces,
/// recovery, event loops, io_uring, the clock) is an option and not a copy of the set-up.
/// Every disconnect is recorded with its reason (`disconnects`); `stop()` disconnects everybody
/// and shuts the HTTP server down (bounded), as each test's `tearDown` needs.
// @unchecked Sendable: every stored property is set in `init` and only read afterwards
// (`disconnects` is a LockedValue).
public final class SocketIOLiveServer: @unchecked Sendable {
    public struct Options {
        /// Long ping timings by default: no test sees a ping it did not ask for.
        public var engine = EngineIOConfiguration(pingInterval: .seconds(5), pingTimeout: .seconds(5))
        public var namespaces: Set<String> = ["/"]
        /// One loop puts every socket of a broadcast in one flush; two exercise the cross-loop hops.
        public var eventLoops = 2
        public var ioUring: IORingMode = .auto
        public var clock: any MonotonicClock = SystemClock()
        /// Anything else of the Socket.IO configuration (recovery window, outbound bound, ...).
        public var configure: (inout SocketIOConfiguration) -> Void = { _ in }

        public init(_ change: (inout Options) -> Void = { _ in }) { change(&self) }
    }

    public let io: SocketIOServer
    public let http: HTTPServer
    public let port: Int
    /// Socket id → disconnect reason, for every socket that went away.
    public let disconnects = LockedValue<[String: String]>([:])
    /// Signalled once per disconnect (`waitForDisconnect`).
    private let disconnected = DispatchSemaphore(value: 0)

    /// Builds the server, lets `handlers` register its handlers (before any client can connect;
    /// not `onDisconnect`, which the fixture keeps for `disconnects`), and starts listening.
    public init(_ options: Options = Options(), handlers: (SocketIOServer) -> Void = { _ in }) throws {
        var config = SocketIOConfiguration(engine: options.engine, namespaces: options.namespaces)
        options.configure(&config)
        io = try SocketIOServer(configuration: config, clock: options.clock, logger: Logger(label: "test"))
        handlers(io)
        let (d, signal) = (disconnects, disconnected)
        io.onDisconnect { socket, reason in
            d.withLock { $0[socket.id] = reason }
            signal.signal()
        }
        var b = RouterBuilder()
        io.mount(on: &b)
        var httpConfig = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: options.eventLoops)
        httpConfig.ioUring = options.ioUring
        http = HTTPServer(configuration: httpConfig, responder: b.freeze(), logger: Logger(label: "test"))
        port = try http.start()
    }

    /// Waits for the next disconnect the server reports (one per call); whether it came in time.
    public func waitForDisconnect(timeout: Double = 5) -> Bool {
        disconnected.wait(timeout: .now() + timeout) == .success
    }

    /// Disconnects every socket and shuts the HTTP server down, waiting at most 15 s.
    public func stop() {
        io.disconnectAll(reason: "test end")
        let h = http
        TestFuture.awaitTask(timeout: 15) { await h.shutdown() }
    }
}
