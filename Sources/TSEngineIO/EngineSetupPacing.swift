import Synchronization
import TSSockets
import TSWebSocket

/// Connection set-up pacing over WebSocket, for test clients that handle one read per tick.
///
/// The official Engine.IO/Socket.IO test suites use the `ws` client and read one frame per
/// event: when the Socket.IO CONNECT reply and the connect handler's first emit arrive in one
/// TCP read, the suite only sees the first. With pacing, the CONNECT reply is written alone and
/// what was emitted during set-up waits until that write has been flushed plus `gap`, then
/// leaves in one write (`EngineIOSession.withPacedWrites`). Real clients parse every frame of a
/// read, so production servers leave this off (nil in `EngineIOConfiguration.setupPacing`): the
/// gap would only delay every client's first event.
public struct EngineSetupPacing: Sendable, Equatable {
    /// Time after the CONNECT reply's write has been flushed before the set-up emits go out.
    public var gap: Duration

    public init(gap: Duration) {
        self.gap = gap
    }

    /// What the official test suites need on a loaded machine (10 ms).
    public static let officialTestSuite = EngineSetupPacing(gap: .milliseconds(10))

    /// `gap` in nanoseconds (never negative), for the event loop's timer.
    var gapNanoseconds: UInt64 {
        let (seconds, attoseconds) = gap.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

/// A WebSocket transport with set-up pacing (`EngineSetupPacing`), wrapped around the real one
/// only when `EngineIOConfiguration.setupPacing` is set (`EngineIOServer.engineTransport`): the
/// session writes to it as to any WebSocket and knows nothing of pacing.
///
/// While `withPacedWrites` runs, or while a paced write is in flight, every frame (set-up
/// packets, pings, broadcasts) queues here: the first is written alone; once that write has been
/// flushed plus `gapNanoseconds`, everything queued meanwhile goes in one write — as the
/// reference writes only after the previous write completed, then flushes its buffer. Every
/// frame is admitted on the connection's loop, in the order it was handed over (a broadcast
/// reaches `sendFrameBytesOnLoop` through a loop hop: a frame sent after it from another thread
/// hops too, so it cannot be queued ahead of it).
final class EnginePacedWebSocket: EngineWebSocketTransport, Sendable {
    struct Writes {
        var inFlight = false
        var queue: [[UInt8]] = []
    }

    let base: any EngineWebSocketTransport
    let gapNanoseconds: UInt64
    /// `withPacedWrites` is running (set on the caller's thread, read when a frame is handed over).
    private let pacing = Atomic<Bool>(false)
    private let writes: EventLoopBound<Writes>

    init(_ base: any EngineWebSocketTransport, gapNanoseconds: UInt64) {
        self.base = base
        self.gapNanoseconds = gapNanoseconds
        writes = EventLoopBound(Writes(), loop: base.loop)
    }

    /// Runs `body` with this WebSocket's writes paced.
    func withPacedWrites<T>(_ body: () throws -> T) rethrows -> T {
        pacing.store(true, ordering: .releasing)
        defer { pacing.store(false, ordering: .releasing) }
        return try body()
    }

    /// On the loop: queue behind a paced write in flight, start one, or write straight through.
    private func admit(_ frame: [UInt8], paced: Bool) {
        let start: Bool = writes.withValue { w in
            if w.inFlight {
                w.queue.append(frame)
                return false
            }
            if paced { w.inFlight = true }
            return true
        }
        guard start else { return }
        if paced { write(frame) } else { base.sendFrameBytesOnLoop(frame) }
    }

    private func write(_ frame: [UInt8]) {
        base.engineSend(frame: frame, thenAfter: gapNanoseconds) { [self] in writeCompleted() }
    }

    /// On the loop, once the previous paced write was flushed plus the gap: what queued
    /// meanwhile goes in one write, or paced mode ends.
    private func writeCompleted() {
        let next: [UInt8]? = writes.withValue { w in
            guard !w.queue.isEmpty else {
                w.inFlight = false
                return nil
            }
            defer { w.queue = [] }
            return w.queue.count == 1 ? w.queue[0] : w.queue.reduce(into: []) { $0.append(contentsOf: $1) }
        }
        if let next { write(next) }
    }

    func engineSend(frame: [UInt8]) {
        let paced = pacing.load(ordering: .acquiring)
        base.loop.executeOrRun { [self] in admit(frame, paced: paced) }
    }

    func sendFrameBytesOnLoop(_ bytes: [UInt8]) { admit(bytes, paced: pacing.load(ordering: .acquiring)) }

    func engineSend(frame: [UInt8], thenAfter gapNanoseconds: UInt64, _ next: @escaping @Sendable () -> Void) {
        base.engineSend(frame: frame, thenAfter: gapNanoseconds, next)
    }
    func engineSend(text: String) { base.engineSend(text: text) }
    func engineSend(binary: [UInt8]) { base.engineSend(binary: binary) }
    func engineClose() { base.engineClose() }
    func engineGoAway() { base.engineGoAway() }
    func engineDrop(reset: Bool) { base.engineDrop(reset: reset) }
    func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void) { base.engineAfterPendingInput(body) }
    var loop: EventLoop { base.loop }
}

extension EngineIOSession {
    /// Runs `body` with websocket writes paced: every packet sent meanwhile (and any sent after
    /// it while they drain) leaves in its own write, after the previous one has been flushed.
    /// Used for the Socket.IO CONNECT reply and the connect handler's first emits, which the
    /// reference server never coalesces into one TCP segment. Only a session whose WebSocket
    /// was wrapped for pacing (`configuration.setupPacing`) is affected; otherwise it only runs
    /// `body`.
    public func withPacedWrites<T>(_ body: () throws -> T) rethrows -> T {
        guard configuration.setupPacing != nil,
              let paced = lock.withLock({ state.machine.webSocket }) as? EnginePacedWebSocket else { return try body() }
        return try paced.withPacedWrites(body)
    }
}

extension EngineIOServer {
    /// The transport a session writes to for `ws`: `ws` itself, or wrapped for set-up pacing
    /// when the configuration asks for it (the official test suites).
    func engineTransport(for ws: any EngineWebSocketTransport) -> any EngineWebSocketTransport {
        guard let pacing = configuration.setupPacing else { return ws }
        return EnginePacedWebSocket(ws, gapNanoseconds: pacing.gapNanoseconds)
    }
}
