#if canImport(Glibc)
import Glibc
#endif
import Logging

/// A fixed set of `EventLoop`s handed out round-robin.
// @unchecked Sendable: `loops` is immutable after init; the round-robin counter is guarded by `lock`.
public final class EventLoopGroup: @unchecked Sendable {
    public let loops: [EventLoop]
    private let lock = Lock()
    private var counter = 0

    /// Number of active processor cores (at least 1).
    public static var activeProcessorCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Starts `count` loop threads (at least one).
    public init(count: Int = EventLoopGroup.activeProcessorCount, clock: any MonotonicClock = SystemClock(),
                logger: Logger = Logger(label: "touchsync.eventloop")) throws {
        var loops: [EventLoop] = []
        for i in 0..<max(1, count) {
            do {
                loops.append(try EventLoop(index: i, clock: clock, logger: logger))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
    }

    /// The next loop, round-robin. Thread-safe.
    public func next() -> EventLoop {
        if loops.count == 1 { return loops[0] }
        let i: Int = lock.withLock {
            let i = counter
            counter = (counter + 1) % loops.count
            return i
        }
        return loops[i]
    }

    /// Stops every loop thread and waits for them. Not callable from a loop thread.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
