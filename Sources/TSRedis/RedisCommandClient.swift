import Logging
import TSSockets

/// A request/response connection of its own (https://redis.io/docs/latest/develop/reference/protocol-spec/,
/// "Pipelining"): commands are written in call order and each reply answers the oldest command
/// still waiting. Two kinds of command share it:
///
/// - `send`: written and forgotten (its reply is only checked for an error, which is logged);
///   while the connection is down these wait in a bounded queue (`maxPendingPublishes`,
///   `maxPendingBytes`, as the publisher) and go out in order when it is back; past the bound one
///   is dropped and counted, so a reader of what they wrote can tell (`dropped`).
/// - `request`: a batch of commands whose replies are awaited, at most `timeout`; nil when the
///   connection is down, is lost before every reply came, or the time is up. Never queued while
///   down: a caller that needs an answer now is better told at once.
///
/// Everything runs on the client's own event loop (one thread); no caller ever blocks on Redis.
// @unchecked Sendable: the mutable state is only touched on `loop`; the entry points hop to it.
public final class RedisCommandClient: @unchecked Sendable {
    public let configuration: RedisConfiguration
    public let stats = RedisStats()
    private let loop: EventLoop
    private let logger: Logger
    private var link: RedisLink!
    private var queued: [[UInt8]] = []
    private var queuedBytes = 0
    /// One slot per command written and not yet answered, in order (loop only).
    private var waiting: [Slot] = []
    private var waitingHead = 0
    private var nextBatch: UInt64 = 0
    private var batches: [UInt64: Batch] = [:]
    /// Fire-and-forget commands dropped since the start (over the bound, or lost unanswered).
    private var droppedCount: UInt64 = 0

    private enum Slot {
        case forget
        case batch(UInt64)
    }

    private struct Batch {
        var replies: [RESPValue]
        let expected: Int
        let resume: (([RESPValue]?) -> Void)
        var timer: ScheduledTaskHandle?
    }

    /// - Parameter maxReplyEntries: the longest array a reply may hold (a whole stream read by `XRANGE`).
    public init(configuration: RedisConfiguration, maxReplyEntries: Int, clock: any MonotonicClock = SystemClock(), logger: Logger) throws {
        var c = configuration
        c.streamReadCount = max(c.streamReadCount, maxReplyEntries)
        self.configuration = c
        self.logger = logger
        loop = try EventLoop(clock: clock, threadName: "ts-redis-cmd")
        link = RedisLink(name: "commands", loop: loop, configuration: c, stats: stats, logger: logger,
                         handshake: [RESPEncoder.command("PING")],
                         onReady: { [unowned self] in ready() }, onReply: { [unowned self] in reply($0) },
                         onDown: { [unowned self] _ in down() })
    }

    deinit {
        if !loop.inEventLoop { loop.shutdown() }
    }

    public func start() { loop.execute { [self] in link.start() } }

    public func stop() async {
        await loop.shutdown(after: { [self] in
            link.stop()
            down()
        })
    }

    /// Fire-and-forget commands dropped so far (thread-safe).
    public var dropped: UInt64 { stats.snapshot.publishDropped }

    /// Writes `commands` (each already `RESPEncoder.command`-encoded) in call order; thread-safe.
    public func send(_ commands: [[UInt8]]) {
        guard !commands.isEmpty else { return }
        loop.executeOrRun { [self] in
            for command in commands { enqueue(command) }
        }
    }

    /// Writes `commands` in order and returns their replies (a Redis error is a `.error` reply),
    /// or nil when they could not all be answered within `timeout`.
    public func request(_ commands: [[UInt8]], timeout: Duration) async -> [RESPValue]? {
        guard !commands.isEmpty else { return [] }
        return await withCheckedContinuation { (continuation: CheckedContinuation<[RESPValue]?, Never>) in
            loop.executeOrRun { [self] in
                guard link.isReady else { return continuation.resume(returning: nil) }
                nextBatch &+= 1
                let id = nextBatch
                var once = false
                let resume: ([RESPValue]?) -> Void = { value in
                    guard !once else { return }
                    once = true
                    continuation.resume(returning: value)
                }
                var batch = Batch(replies: [], expected: commands.count, resume: resume)
                batch.timer = loop.scheduleTask(in: timeout.clockNanoseconds) { [self] in finish(id, nil) }
                batches[id] = batch
                for command in commands {
                    link.write(command)
                    waiting.append(.batch(id))
                }
            }
        }
    }

    private func finish(_ id: UInt64, _ value: [RESPValue]?) {
        guard let batch = batches.removeValue(forKey: id) else { return }
        batch.timer?.cancel()
        batch.resume(value)
    }

    private func enqueue(_ command: [UInt8]) {
        if link.isReady && queued.isEmpty {
            link.write(command)
            waiting.append(.forget)
            return
        }
        guard queued.count < configuration.maxPendingPublishes, queuedBytes + command.count <= configuration.maxPendingBytes else {
            stats.count(\.publishDropped)
            droppedCount += 1
            if droppedCount == 1 || droppedCount % 1000 == 0 {
                logger.error("redis commands: \(queued.count) writes already wait for Redis to come back; one was dropped (\(droppedCount) so far)")
            }
            return
        }
        queued.append(command)
        queuedBytes += command.count
    }

    private func ready() {
        stats.set { $0.publisherReady = true }
        let pending = queued
        queued = []
        queuedBytes = 0
        for command in pending {
            link.write(command)
            waiting.append(.forget)
        }
    }

    private func reply(_ value: RESPValue) {
        guard waitingHead < waiting.count else {
            logger.warning("redis commands: an answer with no command waiting for it: \(value)")
            return
        }
        let slot = waiting[waitingHead]
        waitingHead += 1
        if waitingHead > 1024 && waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        switch slot {
        case .forget:
            if case .error(let message) = value {
                stats.count(\.publishFailed)
                logger.error("redis command refused: \(message)")
            } else {
                stats.count(\.published)
            }
        case .batch(let id):
            guard var batch = batches[id] else { return }  // timed out meanwhile
            batch.replies.append(value)
            if batch.replies.count == batch.expected {
                finish(id, batch.replies)
            } else {
                batches[id] = batch
            }
        }
    }

    /// The connection is gone: unanswered writes are lost (counted as dropped, so a reader of what
    /// they wrote can tell), waiting requests get nil.
    private func down() {
        stats.set { $0.publisherReady = false }
        var lost: UInt64 = 0
        for slot in waiting[waitingHead...] { if case .forget = slot { lost += 1 } }
        if lost > 0 {
            stats.count(\.publishDropped, by: lost)
            droppedCount += lost
            logger.error("redis commands: \(lost) writes were sent on the lost connection without an answer; counted as dropped")
        }
        waiting.removeAll()
        waitingHead = 0
        for id in Array(batches.keys) { finish(id, nil) }
    }
}
