import Logging
import TSSockets

/// One node's Redis pub/sub client: a publisher connection and a subscriber connection to the
/// same server, on their own event loop (one thread). Nothing here blocks: connects, reads and
/// writes are non-blocking on the loop, host names resolve on a short-lived thread.
// @unchecked Sendable: immutable after init; the parts are themselves loop-confined or thread-safe.
public final class RedisPubSub: @unchecked Sendable {
    public let configuration: RedisConfiguration
    public let channel: String
    public let stats = RedisStats()
    public let publisher: RedisPublisher
    public let subscriber: RedisSubscriber
    private let loop: EventLoop
    private let channelBytes: [UInt8]

    /// `onMessage` runs on the client's loop thread for each message on `channel`, in order.
    public init(configuration: RedisConfiguration, channel: String, clock: any MonotonicClock = SystemClock(), logger: Logger,
                onMessage: @escaping @Sendable ([UInt8]) -> Void) throws {
        self.configuration = configuration
        self.channel = channel
        channelBytes = Array(channel.utf8)
        loop = try EventLoop(clock: clock, threadName: "ts-redis")
        publisher = RedisPublisher(loop: loop, configuration: configuration, stats: stats, logger: logger)
        subscriber = RedisSubscriber(loop: loop, configuration: configuration, channel: channel, stats: stats, logger: logger, onMessage: onMessage)
    }

    /// A client dropped without `stop` (e.g. the server's construction failed after it was made)
    /// still ends its loop thread. (Shutdown is idempotent.)
    deinit {
        if !loop.inEventLoop { loop.shutdown() }
    }

    /// Connects both (they keep reconnecting until `stop`).
    public func start() {
        loop.execute { [self] in
            subscriber.start()
            publisher.start()
        }
    }

    /// Publishes `payload` on the channel; thread-safe, in call order.
    public func publish(_ payload: [UInt8]) {
        publisher.publish(channel: channelBytes, payload: payload)
    }

    /// Closes both connections and stops the loop thread.
    public func stop() async {
        await loop.shutdown(after: { [self] in
            publisher.stop()
            subscriber.stop()
        })
    }
}
