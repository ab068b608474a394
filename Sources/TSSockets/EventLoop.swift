import Logging

/// Something registered with an `EventLoop`'s poller. Called on the loop thread only.
protocol EventLoopSelectable: AnyObject {
    /// What is ready: `.readable`, `.writable`, `.hangup`, `.error`.
    func handleEvents(_ events: PollerEvents)
}

/// A cancellable handle for `EventLoop.scheduleTask`.
public struct ScheduledTaskHandle: Sendable {
    let id: UInt64
    let loop: EventLoop

    /// Cancels the task if it has not run yet. Thread-safe.
    public func cancel() { loop.cancelScheduled(id) }
}

/// One thread waiting on a level-triggered `Poller` (epoll, kqueue or poll(2); see `PollerKind`),
/// which also carries the cross-thread wake-up for tasks. Timers live in a min-heap of deadlines
/// driven by `clock`; the poller's timeout is the time to the next deadline.
// @unchecked Sendable: the registration table and read buffer are only touched on the loop thread
// (checked with `inEventLoop`); the task queue and timer heap are guarded by `lock`; `threadID` and
// `usesIORing` are written once by the loop thread before the initialiser returns (it waits on
// `started`); `sendBatcher` and `counters` are loop-thread only (`sendCounters()` hops).
public final class EventLoop: @unchecked Sendable {
    public let clock: any MonotonicClock
    /// Position of this loop in its group (0 for a standalone loop).
    public let index: Int
    let logger: Logger

    /// The readiness backend (its kind is `pollerKind`).
    private let poller: any Poller
    /// Set by the loop thread before `init` returns; nil only until then.
    /// The loop's thread, written once by that thread before `init` returns; read by
    /// `inEventLoop`, which is inlined into every loop-bound access.
    @usableFromInline private(set) var threadID: pthread_t?
    private let lock = Mutex()
    // Guarded by `lock`.
    private var pending: [@Sendable () -> Void] = []
    private var timers = TimerHeap()
    private var timerTasks: [UInt64: @Sendable () -> Void] = [:]
    private var nextTimerID: UInt64 = 1
    private var stopRequested = false
    private var wakePending = false
    // Loop thread only.
    private var registrations: [UInt64: EventLoopSelectable] = [:]
    private var nextRegistrationID: UInt64 = 1
    /// Connections written to during the current iteration, flushed at its end (loop thread only).
    private var flushList: [Connection] = []
    /// Shared read buffer for connections on this loop (loop thread only).
    let readBuffer: UnsafeMutableRawBufferPointer
    /// The io_uring path of `runFlushes` (nil: one send(2) per connection). Loop thread only:
    /// made by the loop thread when it starts and released when it exits. (The kernel ties a
    /// ring to the threads that submit to it: when the ring is closed it interrupts each of
    /// them once — a blocking call with a timeout there fails with EINTR — so no other thread
    /// may ever submit, not even the availability check.)
    private var sendBatcher: SendBatcher?
    private let ioUringMode: IORingMode
    /// How flushes reached the kernel (loop thread only; see `sendCounters()`).
    var counters = SendCounters()
    /// True when this loop's flushes go through io_uring (`server.ioUring`; false when off,
    /// unavailable or refused). Written by the loop thread before `init` returns.
    public private(set) var usesIORing = false
    /// The loop's thread ("ts-loop-N" in a group); `shutdown()` joins it.
    private var thread: SpawnedThread?
    /// Signalled by the loop thread once `threadID` and `usesIORing` are set (guards `isStarted`).
    private let started = Condition()
    private var isStarted = false

    /// The readiness backend this loop runs on (`auto` resolved).
    public var pollerKind: PollerKind { poller.kind }

    /// A standalone loop. `poller: .auto` is the platform's backend unless `TOUCHSYNC_SERVER_POLLER`
    /// names another; an unavailable backend throws `PollerError.unavailable`.
    /// `ioUring: .auto` submits a flush of several connections through io_uring where the kernel
    /// allows it (unless `TOUCHSYNC_SERVER_IO_URING=off`); see `SendBatcher`.
    /// `threadName` (at most 15 bytes) tells its thread apart in profiles; "ts-loop-0" by default.
    public convenience init(clock: any MonotonicClock = SystemClock(), poller: PollerKind = .auto, ioUring: IORingMode = .auto,
                            threadName: String? = nil) throws {
        try self.init(index: 0, clock: clock, logger: Logger(label: "touchsync.eventloop"), poller: poller, ioUring: ioUring,
                      threadName: threadName)
    }

    init(index: Int, clock: any MonotonicClock, logger: Logger, poller kind: PollerKind = .auto, ioUring: IORingMode = .auto,
         threadName: String? = nil) throws {
        self.index = index
        self.clock = clock
        self.logger = logger
        poller = try Platform.makePoller(kind)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        ioUringMode = ioUring.resolved
        try startThread(name: threadName ?? "ts-loop-\(index)")
    }

    deinit {
        readBuffer.deallocate()
    }

    private func startThread(name: String) throws {
        do {
            thread = try SpawnedThread.spawn(name: name, stackSize: 8 << 20) { [self] in
                threadID = pthread_self()
                if ioUringMode != .off { sendBatcher = SendBatcher.make(logger: logger) }
                usesIORing = sendBatcher != nil
                started.withLock {
                    isStarted = true
                    started.broadcast()
                }
                run()
            }
        } catch let error as SpawnedThread.SpawnError {
            poller.close()
            throw SocketError(syscall: "pthread_create", errno: error.code)
        }
        started.wait { isStarted }
    }

    /// True when called on this loop's thread.
    /// One compare, inlined into the caller: glibc's and Darwin's `pthread_equal` are this
    /// equality of the two `pthread_t` values (an address on both), and `pthread_self` reads the
    /// thread pointer. A loop not started yet (`threadID` nil) is no thread's.
    @inlinable
    public var inEventLoop: Bool { threadID == pthread_self() }

    /// Runs `task` on the loop thread (after the current iteration). Thread-safe.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let wake: Bool = lock.withLock {
            pending.append(task)
            if wakePending { return false }
            wakePending = true
            return true
        }
        if wake && !inEventLoop { wakeUp() }
    }

    /// Runs `task` now if on the loop, else hops to it.
    public func executeOrRun(_ task: @escaping @Sendable () -> Void) {
        if inEventLoop { task() } else { execute(task) }
    }

    /// Runs `task` on the loop once `nanoseconds` have passed on the loop's clock. Thread-safe.
    @discardableResult
    public func scheduleTask(in nanoseconds: UInt64, _ task: @escaping @Sendable () -> Void) -> ScheduledTaskHandle {
        let deadline = clock.now() &+ nanoseconds
        let id: UInt64 = lock.withLock {
            let id = nextTimerID
            nextTimerID += 1
            timers.push(deadline: deadline, id: id)
            timerTasks[id] = task
            return id
        }
        if !inEventLoop { wakeUp() }
        return ScheduledTaskHandle(id: id, loop: self)
    }

    func cancelScheduled(_ id: UInt64) {
        // The heap entry stays; it is skipped when popped because its task is gone.
        lock.withLock { _ = timerTasks.removeValue(forKey: id) }
    }

    /// Stops the loop thread and waits for it to exit. Registered descriptors are not closed
    /// (their owners close them). Must not be called on the loop itself.
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on the loop thread")
        let already: Bool = lock.withLock {
            if stopRequested { return true }
            stopRequested = true
            return false
        }
        if already { return }
        wakeUp()
        thread?.join()
    }

    /// Runs `body` on the loop and BLOCKS the calling thread until it has run (inline when called
    /// on the loop). Only for threads that may block while a loop task runs: start-up and
    /// shutdown paths (a listener registering or closing its socket), never an event loop other
    /// than this one, nor a Swift concurrency task for anything but an instant.
    public func submitAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        if inEventLoop { return body() }
        let done = Condition()
        let result = LockedValue<T?>(nil)
        execute {
            let value = body()
            done.withLock {
                result.withLock { $0 = value }
                done.broadcast()
            }
        }
        var value: T?
        done.wait { value = result.current; return value != nil }
        return value!
    }

    private func wakeUp() {
        poller.wakeUp()
    }

    // MARK: registration (loop thread only)

    /// Registers `fd` (level-triggered) and returns its registration token (never 0, never reused).
    func register(fd: Int32, events: PollerEvents, _ selectable: EventLoopSelectable) throws -> UInt64 {
        assert(inEventLoop)
        let id = nextRegistrationID
        nextRegistrationID += 1
        try poller.add(fd: fd, token: id, interest: events)
        registrations[id] = selectable
        return id
    }

    func modify(fd: Int32, registration: UInt64, events: PollerEvents) throws {
        assert(inEventLoop)
        try poller.modify(fd: fd, token: registration, interest: events)
    }

    func deregister(fd: Int32, registration: UInt64) {
        assert(inEventLoop)
        poller.remove(fd: fd, token: registration)
        registrations[registration] = nil
    }

    /// Queues `connection` for the end-of-iteration flush. Loop only.
    func scheduleFlush(_ connection: Connection) {
        assert(inEventLoop)
        flushList.append(connection)
    }

    /// How this loop's flushes reached the kernel so far (hops to the loop when called elsewhere).
    public func sendCounters() async -> SendCounters {
        if inEventLoop { return counters }
        return await withCheckedContinuation { (continuation: CheckedContinuation<SendCounters, Never>) in
            execute { continuation.resume(returning: self.counters) }
        }
    }

    private func runFlushes() {
        // A flush can run handler code that writes again (e.g. writability callbacks); those
        // connections join the list and are flushed in the same pass. Several connections at
        // once (a broadcast's hop) go through the ring, one io_uring_enter(2) per chunk.
        var i = 0
        while i < flushList.count {
            if let batcher = sendBatcher, flushList.count - i >= SendBatcher.minimumConnections {
                let end = flushList.count
                batcher.flush(flushList, from: i, to: end, loop: self)
                i = end
            } else {
                flushList[i].flushScheduledWrites()
                i += 1
            }
        }
        flushList.removeAll(keepingCapacity: flushList.count <= 4096)
    }

    // MARK: the loop

    private func run() {
        let events = UnsafeMutableBufferPointer<PollerEvent>.allocate(capacity: 256)
        events.initialize(repeating: PollerEvent(token: 0, events: []))
        defer { events.deallocate() }
        while true {
            let timeout: Int32 = lock.withLock {
                if stopRequested { return -2 }
                if !pending.isEmpty { return 0 }
                guard let next = timers.peekDeadline() else { return -1 }
                let now = clock.now()
                if next <= now { return 0 }
                // Round up to whole milliseconds so we never spin just before a deadline.
                let ms = (next - now + 999_999) / 1_000_000
                return Int32(min(ms, 60_000))
            }
            if timeout == -2 { break }
            let n: Int
            do {
                n = try poller.wait(timeoutMilliseconds: timeout, into: events)
            } catch {
                logger.critical("poller wait failed", metadata: ["poller": "\(poller.kind)", "error": "\(error)"])
                break
            }
            for i in 0..<n {
                let ev = events[i]
                registrations[ev.token]?.handleEvents(ev.events)
            }
            runExpiredTimers()
            runPendingTasks()
            runFlushes()
        }
        // Drain tasks so closures (and whatever they retain) are released on the loop.
        runPendingTasks()
        runFlushes()
        sendBatcher = nil  // closes the ring on its own thread
        poller.close()
        registrations.removeAll()
    }

    private func runPendingTasks() {
        let tasks: [@Sendable () -> Void] = lock.withLock {
            wakePending = false
            let t = pending
            pending.removeAll(keepingCapacity: true)
            return t
        }
        for task in tasks { task() }
    }

    private func runExpiredTimers() {
        let now = clock.now()
        while true {
            let task: (@Sendable () -> Void)?? = lock.withLock {
                guard let deadline = timers.peekDeadline(), deadline <= now else { return .none }
                let id = timers.pop()
                return .some(timerTasks.removeValue(forKey: id))
            }
            guard let entry = task else { return }
            entry?()
        }
    }
}

/// Min-heap of (deadline, id); ties broken by id so equal deadlines run in scheduling order.
struct TimerHeap {
    private var items: [(deadline: UInt64, id: UInt64)] = []

    func peekDeadline() -> UInt64? { items.first?.deadline }
    var count: Int { items.count }

    private static func less(_ a: (deadline: UInt64, id: UInt64), _ b: (deadline: UInt64, id: UInt64)) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
    }

    mutating func push(deadline: UInt64, id: UInt64) {
        items.append((deadline, id))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if Self.less(items[i], items[parent]) {
                items.swapAt(i, parent)
                i = parent
            } else { break }
        }
    }

    mutating func pop() -> UInt64 {
        let top = items[0].id
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var smallest = i
                if l < items.count && Self.less(items[l], items[smallest]) { smallest = l }
                if r < items.count && Self.less(items[r], items[smallest]) { smallest = r }
                if smallest == i { break }
                items.swapAt(i, smallest)
                i = smallest
            }
        }
        return top
    }
}
