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

    /// Number of cores this process may run on (at least 1): the sched_getaffinity(2) mask, so
    /// `taskset -c 0` or a cpuset gives one loop per usable core; the online count if that fails.
    public static var activeProcessorCount: Int {
        let bytes = 1024 / 8  // room for 1024 CPUs, like glibc's cpu_set_t
        let mask = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 8)
        defer { mask.deallocate() }
        mask.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        if Epoll.schedGetaffinity(0, bytes, mask) == 0 {
            var count = 0
            for i in 0..<(bytes / 8) { count += mask.load(fromByteOffset: i * 8, as: UInt64.self).nonzeroBitCount }
            if count > 0 { return count }
        }
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
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
