import Logging
import TSSockets

/// The reading connection of a stream (https://redis.io/docs/latest/develop/data-types/streams/):
/// a dedicated connection, because `XREAD BLOCK` holds it until an entry arrives or the block
/// time ends. It reads from the id of the last entry it handed on, so a reconnect (or a Redis
/// that restarted with its data) resumes exactly after it: what was added meanwhile is read, in
/// stream order, and nothing twice.
///
/// The first read position is the stream's last entry at the first connect
/// (`XREVRANGE key + - COUNT 1`; "0-0" when the stream is empty): a node that starts does not
/// replay the history. One command is outstanding at a time, so each reply is the answer to the
/// command just sent (PONGs are swallowed by the link). The block time is kept under the PING
/// interval so the link hears from Redis before it would give the connection up.
///
/// A reply over the decoder's limits (a batch of large entries) closes the connection; the read
/// after a loss asks for one entry only, then goes back to `readCount`.
// @unchecked Sendable: every mutable property is only touched on `loop`.
public final class RedisStreamReader: @unchecked Sendable {
    enum Reading {
        /// The starting position is being asked for.
        case positioning
        case reading
    }

    let loop: EventLoop
    private let stats: RedisStats
    private let logger: Logger
    private let key: [UInt8]
    private let readCount: Int
    private let blockMilliseconds: Int64
    private let onEntry: (_ id: String, _ payload: [UInt8]) -> Void
    private var link: RedisLink!
    /// The id of the last entry handed on (nil until the first position is known).
    private(set) var lastId: String?
    private var outstanding: Reading?
    private var careful = false

    init(loop: EventLoop, configuration: RedisConfiguration, key: String, readCount: Int, block: Duration, stats: RedisStats,
         logger: Logger, onEntry: @escaping (String, [UInt8]) -> Void) {
        self.loop = loop
        self.stats = stats
        self.logger = logger
        self.key = Array(key.utf8)
        self.readCount = max(1, readCount)
        let blockNs = min(block.clockNanoseconds, configuration.pingInterval.clockNanoseconds / 2)
        blockMilliseconds = max(1, Int64(blockNs / 1_000_000))
        self.onEntry = onEntry
        var readerConfiguration = configuration
        readerConfiguration.streamReadCount = self.readCount
        link = RedisLink(name: "reader", loop: loop, configuration: readerConfiguration, stats: stats, logger: logger,
                         handshake: [RESPEncoder.command("PING")],
                         onReady: { [unowned self] in ready() },
                         onReply: { [unowned self] in reply($0) },
                         onDown: { [unowned self] _ in down() })
    }

    func start() { link.start() }
    func stop() { link.stop() }

    private func ready() {
        stats.set { $0.subscriberReady = true }
        next()
    }

    private func down() {
        stats.set { $0.subscriberReady = false }
        if outstanding == .reading { careful = true }
        outstanding = nil
    }

    private func next() {
        let command: [UInt8]
        if lastId == nil {
            outstanding = .positioning
            command = RESPEncoder.command([Array("XREVRANGE".utf8), key, [UInt8(ascii: "+")], [UInt8(ascii: "-")],
                                           Array("COUNT".utf8), [UInt8(ascii: "1")]])
        } else {
            outstanding = .reading
            command = RESPEncoder.command([Array("XREAD".utf8), Array("COUNT".utf8), Array(String(careful ? 1 : readCount).utf8),
                                           Array("BLOCK".utf8), Array(String(blockMilliseconds).utf8),
                                           Array("STREAMS".utf8), key, Array(lastId!.utf8)])
        }
        if !link.write(command) { outstanding = nil }
    }

    private func reply(_ value: RESPValue) {
        guard let was = outstanding else {
            logger.warning("redis reader: an answer with no command waiting for it: \(value)")
            return
        }
        outstanding = nil
        if case .error(let message) = value {
            // A key of another type, or a command refused: retried on the next block period.
            logger.error("redis stream read refused: \(message)")
            stats.setError("reader: \(message)")
            loop.scheduleTask(in: UInt64(blockMilliseconds) * 1_000_000) { [self] in
                if outstanding == nil { next() }
            }
            return
        }
        switch was {
        case .positioning:
            lastId = Self.entries(value).last?.id ?? "0-0"
            logger.info("redis reader: reading \(String(decoding: key, as: UTF8.self)) after \(lastId!)")
        case .reading:
            // XREAD: nil on timeout, else [[key, [[id, [field, value, …]], …]]].
            if case .array(let streams?) = value {
                for stream in streams {
                    guard case .array(let pair?) = stream, pair.count == 2 else { continue }
                    for entry in Self.entries(pair[1]) {
                        lastId = entry.id
                        stats.count(\.received)
                        if let payload = entry.payload { onEntry(entry.id, payload) }
                    }
                }
            }
            careful = false
        }
        next()
    }

    /// `[[id, [field, value, …]], …]` as ids and the value of the first field.
    static func entries(_ value: RESPValue) -> [(id: String, payload: [UInt8]?)] {
        guard case .array(let items?) = value else { return [] }
        return items.compactMap { item in
            guard case .array(let parts?) = item, parts.count == 2, let id = parts[0].text else { return nil }
            guard case .array(let fields?) = parts[1], fields.count >= 2 else { return (id, nil) }
            return (id, fields[1].bytes)
        }
    }
}
