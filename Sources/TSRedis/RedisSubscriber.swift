import Logging
import TSSockets

/// The subscribed connection: `SUBSCRIBE channel` (https://redis.io/docs/latest/commands/subscribe/),
/// sent again on every reconnect. Messages arrive as `["message", channel, payload]` pushes
/// (RESP spec §"Pub/Sub"); each payload goes to `onMessage` on the loop, in arrival order.
/// Messages published while the connection was down are not seen (pub/sub keeps nothing).
// @unchecked Sendable: the link is only touched on `loop`.
public final class RedisSubscriber: @unchecked Sendable {
    let loop: EventLoop
    private let stats: RedisStats
    private let logger: Logger
    private let channel: [UInt8]
    private let onMessage: ([UInt8]) -> Void
    private var link: RedisLink!

    init(loop: EventLoop, configuration: RedisConfiguration, channel: String, stats: RedisStats, logger: Logger,
         onMessage: @escaping ([UInt8]) -> Void) {
        self.loop = loop
        self.stats = stats
        self.logger = logger
        self.channel = Array(channel.utf8)
        self.onMessage = onMessage
        link = RedisLink(name: "subscriber", loop: loop, configuration: configuration, stats: stats, logger: logger,
                         handshake: [RESPEncoder.command("SUBSCRIBE", channel)],
                         onReady: { stats.set { $0.subscriberReady = true } },
                         onReply: { [unowned self] in push($0) },
                         onDown: { _ in stats.set { $0.subscriberReady = false } })
    }

    func start() { link.start() }
    func stop() { link.stop() }

    private func push(_ value: RESPValue) {
        guard case .array(let items?) = value, let kind = items.first?.text else {
            logger.warning("redis subscriber: unexpected reply \(value)")
            return
        }
        switch kind {
        case "message":
            guard items.count == 3, items[1].bytes == channel, let payload = items[2].bytes else {
                logger.warning("redis subscriber: malformed message push")
                return
            }
            stats.count(\.received)
            onMessage(payload)
        case "subscribe", "unsubscribe":
            break
        default:
            logger.warning("redis subscriber: unexpected push \(kind)")
        }
    }
}
