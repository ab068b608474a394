import Logging

/// A fixed set of `EventLoop`s handed out round-robin.
// @unchecked Sendable: `loops` is immutable after init; the round-robin counter is guarded by `lock`.
public final class EventLoopGroup: @unchecked Sendable {
    public let loops: [EventLoop]
    private let lock = Mutex()
    private var counter = 0

    /// Number of cores this process may run on (at least 1): on Linux the sched_getaffinity(2)
    /// mask, so `taskset -c 0` or a cpuset gives one loop per usable core; elsewhere the online count.
    public static var activeProcessorCount: Int { Platform.availableProcessorCount() }

    /// Starts `count` loop threads (at least one), each on its own `poller` (`.auto`: the platform's
    /// backend unless `TOUCHSYNC_SERVER_POLLER` names another), each flushing through io_uring
    /// per `ioUring` (`server.ioUring`).
    public init(count: Int = EventLoopGroup.activeProcessorCount, clock: any MonotonicClock = SystemClock(),
                logger: Logger = Logger(label: "touchsync.eventloop"), poller: PollerKind = .auto,
                ioUring: IORingMode = .auto) throws {
        var loops: [EventLoop] = []
        for i in 0..<max(1, count) {
            do {
                loops.append(try EventLoop(index: i, clock: clock, logger: logger, poller: poller, ioUring: ioUring))
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
