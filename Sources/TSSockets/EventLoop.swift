#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Something registered with an `EventLoop`'s epoll set. Called on the loop thread only.
protocol EventLoopSelectable: AnyObject {
    /// `events` is the epoll event mask (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR, ...).
    func handleEvents(_ events: UInt32)
}

/// A cancellable handle for `EventLoop.scheduleTask`.
public struct ScheduledTaskHandle: Sendable {
    let id: UInt64
    let loop: EventLoop

    /// Cancels the task if it has not run yet. Thread-safe.
    public func cancel() { loop.cancelScheduled(id) }
}

/// One thread running `epoll_wait` (level-triggered) plus an eventfd used to wake it for
/// cross-thread tasks. Timers live in a min-heap of deadlines driven by `clock`; the epoll timeout
/// is the time to the next deadline.
// @unchecked Sendable: the registration table and read buffer are only touched on the loop thread
// (checked with `inEventLoop`); the task queue and timer heap are guarded by `lock`; `threadID` is
// written once before the initialiser returns.
public final class EventLoop: @unchecked Sendable {
    public let clock: any MonotonicClock
    /// Position of this loop in its group (0 for a standalone loop).
    public let index: Int
    let logger: Logger

    private let epfd: Int32
    private let wakeFD: Int32
    private var threadID = pthread_t()
    private let lock = Lock()
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
    private let finished = Lock()
    private var threadExited = false
    private let startSemaphore = Semaphore()
    private let exitSemaphore = Semaphore()

    public convenience init(clock: any MonotonicClock = SystemClock()) throws {
        try self.init(index: 0, clock: clock, logger: Logger(label: "touchsync.eventloop"))
    }

    init(index: Int, clock: any MonotonicClock, logger: Logger) throws {
        self.index = index
        self.clock = clock
        self.logger = logger
        let ep = Epoll.create()
        if ep < 0 { throw SocketError.current("epoll_create1") }
        let efd = Epoll.eventfd()
        if efd < 0 {
            let e = SocketError.current("eventfd")
            Glibc.close(ep)
            throw e
        }
        if Epoll.ctl(ep, Epoll.CTL_ADD, efd, events: Epoll.IN, data: 0) != 0 {
            let e = SocketError.current("epoll_ctl")
            Glibc.close(ep)
            Glibc.close(efd)
            throw e
        }
        epfd = ep
        wakeFD = efd
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        try startThread()
    }

    deinit {
        readBuffer.deallocate()
    }

    private func startThread() throws {
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let loop = Unmanaged<EventLoop>.fromOpaque(arg!).takeRetainedValue()
            loop.threadID = pthread_self()
            loop.startSemaphore.signal()
            loop.run()
            return nil
        }, box.toOpaque())
        if rc != 0 {
            box.release()
            Glibc.close(epfd)
            Glibc.close(wakeFD)
            throw SocketError(syscall: "pthread_create", errno: rc)
        }
        startSemaphore.wait()
        pthread_detach(tid)
    }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool { pthread_equal(pthread_self(), threadID) != 0 }

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
        exitSemaphore.wait()
    }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: registration (loop thread only)

    func register(fd: Int32, events: UInt32, _ selectable: EventLoopSelectable) throws -> UInt64 {
        assert(inEventLoop)
        let id = nextRegistrationID
        nextRegistrationID += 1
        if Epoll.ctl(epfd, Epoll.CTL_ADD, fd, events: events, data: id) != 0 { throw SocketError.current("epoll_ctl") }
        registrations[id] = selectable
        return id
    }

    func modify(fd: Int32, registration: UInt64, events: UInt32) throws {
        assert(inEventLoop)
        if Epoll.ctl(epfd, Epoll.CTL_MOD, fd, events: events, data: registration) != 0 { throw SocketError.current("epoll_ctl") }
    }

    func deregister(fd: Int32, registration: UInt64) {
        assert(inEventLoop)
        _ = Epoll.ctl(epfd, Epoll.CTL_DEL, fd, events: 0, data: 0)
        registrations[registration] = nil
    }

    /// Queues `connection` for the end-of-iteration flush. Loop only.
    func scheduleFlush(_ connection: Connection) {
        assert(inEventLoop)
        flushList.append(connection)
    }

    private func runFlushes() {
        // A flush can run handler code that writes again (e.g. writability callbacks); those
        // connections join the list and are flushed in the same pass.
        var i = 0
        while i < flushList.count {
            flushList[i].flushScheduledWrites()
            i += 1
        }
        flushList.removeAll(keepingCapacity: flushList.count <= 4096)
    }

    // MARK: the loop

    private func run() {
        let maxEvents = 256
        let events = UnsafeMutableRawPointer.allocate(byteCount: maxEvents * Epoll.eventSize, alignment: 16)
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
            let n = Epoll.wait(epfd, events, Int32(maxEvents), timeout)
            if n < 0 {
                let err = Glibc.errno
                if err == EINTR { continue }
                logger.critical("epoll_wait failed", metadata: ["error": "\(SocketError(syscall: "epoll_wait", errno: err))"])
                break
            }
            for i in 0..<Int(n) {
                let ev = Epoll.event(at: i, in: events)
                let id = ev.data
                if id == 0 {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    continue
                }
                registrations[id]?.handleEvents(ev.events)
            }
            runExpiredTimers()
            runPendingTasks()
            runFlushes()
        }
        // Drain tasks so closures (and whatever they retain) are released on the loop.
        runPendingTasks()
        runFlushes()
        Glibc.close(epfd)
        Glibc.close(wakeFD)
        registrations.removeAll()
        exitSemaphore.signal()
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

/// A counting semaphore over pthread primitives.
// @unchecked Sendable: `count` is only accessed while holding `mutex`.
final class Semaphore: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0
    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }
    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        cond.deallocate()
    }
    func signal() {
        pthread_mutex_lock(mutex)
        count += 1
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }
    func wait() {
        pthread_mutex_lock(mutex)
        while count == 0 { pthread_cond_wait(cond, mutex) }
        count -= 1
        pthread_mutex_unlock(mutex)
    }
}
