import Logging
import TSSockets

/// The publishing connection: `PUBLISH channel payload` (https://redis.io/docs/latest/commands/publish/),
/// pipelined, answers matched in order (RESP spec §"Pipelining"). Publishes wait in a bounded
/// queue while the connection is down and go out in order when it is back; a publish that would
/// pass `maxPendingPublishes` / `maxPendingBytes` (counted with those sent and unanswered) is
/// dropped and counted, never buffered. A publish sent on a connection that is then lost is
/// counted as failed and not re-sent (at most once, as Redis pub/sub itself), unless the
/// publisher was made with `resendUnanswered` (the stream's `XADD`s, `RedisStream`): then those
/// are sent again first when the connection is back, and readers drop the copies by their
/// per-node sequence (at least once).
// @unchecked Sendable: the queue and link are only touched on `loop`; `publish` hops to it.
public final class RedisPublisher: @unchecked Sendable {
    let loop: EventLoop
    private let configuration: RedisConfiguration
    private let stats: RedisStats
    private let logger: Logger
    private var link: RedisLink!
    /// Encoded PUBLISH commands not yet written (loop only), from `head`.
    private var queued: [[UInt8]] = []
    private var head = 0
    private var queuedBytes = 0
    /// The commands written and not yet answered, in order (loop only).
    private var inFlight: [[UInt8]] = []
    private var inFlightHead = 0
    private var inFlightBytes = 0
    private var lastDropLog: UInt64 = 0
    private var droppedSinceLog: UInt64 = 0
    private let resendUnanswered: Bool
    private let verb: String

    init(loop: EventLoop, configuration: RedisConfiguration, stats: RedisStats, logger: Logger, resendUnanswered: Bool = false) {
        self.loop = loop
        self.resendUnanswered = resendUnanswered
        verb = resendUnanswered ? "XADD" : "PUBLISH"
        self.configuration = configuration
        self.stats = stats
        self.logger = logger
        link = RedisLink(name: "publisher", loop: loop, configuration: configuration, stats: stats, logger: logger,
                         handshake: [RESPEncoder.command("PING")],
                         onReady: { [unowned self] in ready() }, onReply: { [unowned self] in reply($0) },
                         onDown: { [unowned self] _ in down() })
    }

    func start() { link.start() }
    func stop() { link.stop() }

    /// Publishes `payload` on `channel` (thread-safe; in call order per caller).
    public func publish(channel: [UInt8], payload: [UInt8]) {
        loop.executeOrRun { [self] in
            enqueue(payload: payload) { RESPEncoder.command([Array("PUBLISH".utf8), channel, payload]) }
        }
    }

    /// Sends `command` (already encoded, carrying `payload`) in call order (thread-safe).
    func send(payload: [UInt8], command: @escaping @Sendable () -> [UInt8]) {
        loop.executeOrRun { [self] in enqueue(payload: payload, command: command) }
    }

    private var pendingCount: Int { (queued.count - head) + (inFlight.count - inFlightHead) }

    private func enqueue(payload: [UInt8], command encode: () -> [UInt8]) {
        guard payload.count <= configuration.maxMessageBytes else {
            return drop("a \(payload.count)-byte message is over realtime.redis.maxMessageBytes (\(configuration.maxMessageBytes))")
        }
        let command = encode()
        let size = command.count
        guard pendingCount < configuration.maxPendingPublishes, queuedBytes + inFlightBytes + size <= configuration.maxPendingBytes else {
            return drop("\(pendingCount) publishes (\(queuedBytes + inFlightBytes) bytes) already wait for Redis "
                        + "(realtime.redis.maxPendingPublishes \(configuration.maxPendingPublishes), maxPendingBytes \(configuration.maxPendingBytes))")
        }
        if link.isReady && head == queued.count {
            send(command)
        } else {
            queued.append(command)
            queuedBytes += command.count
        }
        updatePending()
    }

    private func send(_ command: [UInt8]) {
        link.write(command)
        inFlight.append(command)
        inFlightBytes += command.count
    }

    private func drop(_ why: String) {
        stats.count(\.publishDropped)
        droppedSinceLog += 1
        let now = loop.clock.now()
        if lastDropLog == 0 || now &- lastDropLog >= 10_000_000_000 {
            logger.error("redis publish dropped (\(droppedSinceLog) since the last such line): \(why)")
            lastDropLog = now
            droppedSinceLog = 0
        }
    }

    private func ready() {
        stats.set { $0.publisherReady = true }
        // In order: what waited while the connection was down.
        while head < queued.count {
            let c = queued[head]
            queued[head] = []
            head += 1
            queuedBytes -= c.count
            send(c)
        }
        queued.removeAll(keepingCapacity: false)
        head = 0
        updatePending()
    }

    private func reply(_ value: RESPValue) {
        guard inFlightHead < inFlight.count else {
            logger.warning("redis publisher: an answer with no command waiting for it: \(value)")
            return
        }
        inFlightBytes -= inFlight[inFlightHead].count
        inFlight[inFlightHead] = []
        inFlightHead += 1
        if inFlightHead > 1024 && inFlightHead * 2 > inFlight.count {
            inFlight.removeFirst(inFlightHead)
            inFlightHead = 0
        }
        if case .error(let message) = value {
            stats.count(\.publishFailed)
            logger.error("redis \(verb) refused: \(message)")
        } else {
            stats.count(\.published)
        }
        updatePending()
    }

    private func down() {
        stats.set { $0.publisherReady = false }
        let lost = inFlight.count - inFlightHead
        if lost > 0 && resendUnanswered {
            // Sent first when the connection is back, before what queued meanwhile (order kept).
            let unanswered = Array(inFlight[inFlightHead...])
            queued = unanswered + queued[head...]
            head = 0
            queuedBytes += inFlightBytes
            logger.warning("redis publisher: \(lost) \(verb)s were sent on the lost connection without an answer; they are sent again on reconnect (readers drop copies)")
        } else if lost > 0 {
            stats.count(\.publishFailed, by: UInt64(lost))
            logger.error("redis publisher: \(lost) publishes were sent on the lost connection without an answer; counted as failed")
        }
        inFlight.removeAll()
        inFlightHead = 0
        inFlightBytes = 0
        updatePending()
    }

    private func updatePending() {
        let n = pendingCount
        stats.set { $0.pending = n }
    }
}
