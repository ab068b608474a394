import Logging
import TSSockets

/// One node's Redis stream client (docs/realtime-cluster.md "Transport"): `XADD key MAXLEN ~ N *
/// e payload` on a pipelined connection (https://redis.io/docs/latest/commands/xadd/) and a
/// dedicated reading connection (`RedisStreamReader`, `XREAD BLOCK … STREAMS key lastId`), on
/// their own event loop (one thread).
///
/// Unlike pub/sub, the stream keeps what was added: a reader whose connection was lost, or a
/// Redis restarted with its data (AOF or RDB), resumes after the last entry it read. The stream
/// is capped at about `maxLength` entries (`MAXLEN ~` trims whole macro nodes, so a little more
/// may be kept); a reader that falls further behind than that misses the trimmed entries, which
/// its owner detects from the per-node numbers in the payloads. `XADD`s sent on a lost connection
/// are sent again (the entry may exist twice; readers drop the copy by those numbers).
// @unchecked Sendable: immutable after init; the parts are themselves loop-confined or thread-safe.
public final class RedisStream: RedisEventTransport, @unchecked Sendable {
    public let configuration: RedisConfiguration
    public let key: String
    public let maxLength: Int
    public let stats = RedisStats()
    let publisher: RedisPublisher
    let reader: RedisStreamReader
    private let loop: EventLoop
    private let keyBytes: [UInt8]

    /// `onEntry` runs on the client's loop thread for each entry read, in stream order.
    public init(configuration: RedisConfiguration, key: String, maxLength: Int, readCount: Int, block: Duration,
                clock: any MonotonicClock = SystemClock(), logger: Logger,
                onEntry: @escaping @Sendable (_ id: String, _ payload: [UInt8]) -> Void) throws {
        self.configuration = configuration
        self.key = key
        self.maxLength = max(1, maxLength)
        keyBytes = Array(key.utf8)
        loop = try EventLoop(clock: clock, threadName: "ts-redis")
        publisher = RedisPublisher(loop: loop, configuration: configuration, stats: stats, logger: logger, resendUnanswered: true)
        reader = RedisStreamReader(loop: loop, configuration: configuration, key: key, readCount: readCount, block: block,
                                   stats: stats, logger: logger, onEntry: onEntry)
    }

    deinit {
        if !loop.inEventLoop { loop.shutdown() }
    }

    public var destination: String { "stream \(key)" }

    public func start() {
        loop.execute { [self] in
            reader.start()
            publisher.start()
        }
    }

    /// Appends `payload` to the stream; thread-safe, in call order.
    public func publish(_ payload: [UInt8]) {
        let key = keyBytes
        let maxLength = Array(String(maxLength).utf8)
        publisher.send(payload: payload) {
            RESPEncoder.command([Array("XADD".utf8), key, Array("MAXLEN".utf8), [UInt8(ascii: "~")], maxLength,
                                 [UInt8(ascii: "*")], [UInt8(ascii: "e")], payload])
        }
    }

    public func stop() async {
        await loop.shutdown(after: { [self] in
            publisher.stop()
            reader.stop()
        })
    }
}

/// What `RedisEventBridge` sends events through: a stream (`RedisStream`, the default) or
/// pub/sub (`RedisPubSub`).
public protocol RedisEventTransport: AnyObject, Sendable {
    var configuration: RedisConfiguration { get }
    var stats: RedisStats { get }
    /// "stream <key>" or "channel <name>", for log lines.
    var destination: String { get }
    func start()
    func publish(_ payload: [UInt8])
    func stop() async
}

extension RedisPubSub: RedisEventTransport {
    public var destination: String { "channel \(channel)" }
}
