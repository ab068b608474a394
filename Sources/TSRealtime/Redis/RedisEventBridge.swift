import Logging
import TSContract
import TSDomain
import TSJSON
import TSRedis
import TSSocketIO
import TSSync

/// Cross-node fan-out (docs/realtime-cluster.md). A subscriber of the domain's
/// `FanoutEventPublisher` beside the local `RealtimeBroadcaster`: each committed event is sent,
/// as the domain event itself (not packets), through the transport: a Redis stream
/// `<prefix>:events` (the default; `RedisStream`) or the pub/sub channel of the same name
/// (`RedisPubSub`). An event another node sent is handed to this node's broadcaster only, which
/// computes per-recipient payloads (`hasReacted`, badges) for this node's sockets and skips
/// `originSocketId`.
///
/// Envelope, version 1: `{"v":1,"node":"<node id>","n":<number>,"type":"event","event":{…DomainEvent.wireJSON}}`
/// and `{"v":1,"node":…,"n":…,"type":"logout","userId":…}` (a logout disconnects the user's
/// sockets on every node). `n` numbers one node's messages 1, 2, 3, … in publish order: a reader
/// drops a message whose number it has already seen from that node (a stream entry added twice
/// because its `XADD` was re-sent after a lost connection) and counts the numbers it never got
/// (a stream trimmed past the reader's position, a publish dropped or lost). A node skips its own
/// messages. Received messages are handed on one at a time, in the transport's order.
// @unchecked Sendable: every stored property is immutable after init and thread-safe itself.
public final class RedisEventBridge: DomainEventPublisher, @unchecked Sendable {
    public static let envelopeVersion: Int64 = 1
    public let nodeId: String
    public let transport: any RedisEventTransport
    private let local: any DomainEventPublisher
    private let hub: SocketIOServer
    let logger: Logger
    private let inbound: AsyncStream<[UInt8]>.Continuation
    private let inboundStream: AsyncStream<[UInt8]>
    private let counters = LockedValue(Counters())
    private let consumer = LockedValue<Task<Void, Never>?>(nil)
    /// The number of this node's last message (assigned and handed to the transport under the
    /// lock, so numbers follow the transport's order).
    private let sent = LockedValue<Int64>(0)
    /// The last number received from each other node (receiving task only, bounded).
    private var lastSeen = PeerNumbers(capacity: 4096)
    /// Test mode across the cluster (RedisEventBridge+Control.swift).
    let testControl = TestModeControl()
    /// Sessions kept in Redis for recovery on another node (recovery on), else nil.
    public let sessionMirror: RedisSessionMirror?

    /// Which Redis mechanism carries the events.
    public enum Transport: Sendable, Equatable {
        /// Pub/sub: nothing kept, at most once.
        case pubsub
        /// A stream capped at about `maxLength` entries, read `readCount` at a time, blocking `block` at most per read.
        case stream(maxLength: Int, readCount: Int, block: Duration)
    }

    struct Counters {
        var delivered: UInt64 = 0
        var ownSkipped: UInt64 = 0
        var dropped: UInt64 = 0
        var invalid: UInt64 = 0
        var duplicates: UInt64 = 0
        var missed: UInt64 = 0
        var lastDropLog: ContinuousClock.Instant?
    }

    public init(configuration: RedisConfiguration, channelPrefix: String, transport kind: Transport = .pubsub, maxInboundBacklog: Int,
                local: any DomainEventPublisher, hub: SocketIOServer, sessionMirror: RedisSessionMirror? = nil, logger: Logger) throws {
        var rng = SystemRandomNumberGenerator()
        nodeId = String(rng.next(), radix: 16) + String(rng.next(), radix: 16)
        self.local = local
        self.hub = hub
        self.sessionMirror = sessionMirror
        self.logger = logger
        (inboundStream, inbound) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingOldest(max(1, maxInboundBacklog)))
        let continuation = inbound
        let counters = counters
        let onMessage: @Sendable ([UInt8]) -> Void = { payload in
            if case .dropped = continuation.yield(payload) {
                let log: Bool = counters.withLock {
                    $0.dropped += 1
                    let now = ContinuousClock.now
                    if let last = $0.lastDropLog, now - last < .seconds(10) { return false }
                    $0.lastDropLog = now
                    return true
                }
                if log {
                    logger.error("an event from another node was dropped: \(maxInboundBacklog) received events already wait for this node's broadcaster (realtime.redis.maxInboundBacklog)")
                }
            }
        }
        switch kind {
        case .pubsub:
            transport = try RedisPubSub(configuration: configuration, channel: channelPrefix + ":events", logger: logger, onMessage: onMessage)
        case .stream(let maxLength, let readCount, let block):
            transport = try RedisStream(configuration: configuration, key: channelPrefix + ":events", maxLength: maxLength,
                                        readCount: readCount, block: block, logger: logger) { _, payload in onMessage(payload) }
        }
    }

    /// Connects to Redis and starts handing received events to the broadcaster.
    public func start() {
        logger.notice("cross-node fan-out over \(transport.configuration.url), \(transport.destination), node id \(nodeId)")
        let stream = inboundStream
        consumer.withLock {
            $0 = Task { [self] in
                for await payload in stream { await receive(payload) }
            }
        }
        transport.start()
        sessionMirror?.start()
        startTestModeHeartbeat()
    }

    public func stop() async {
        testControl.stopHeartbeat()
        await sessionMirror?.stop()
        await transport.stop()
        inbound.finish()
        await consumer.current?.value
    }

    // MARK: outgoing

    public func publish(_ event: DomainEvent) {
        send(["type": "event", "event": event.wireJSON])
    }

    /// A logout revokes the user's tokens: their sockets on the other nodes go too.
    public func publishLogout(userId: String) {
        send(["type": "logout", "userId": .string(userId)])
    }

    func send(_ body: JSONObject) {
        var o: JSONObject = ["v": .int(Self.envelopeVersion), "node": .string(nodeId)]
        for (k, v) in body { o[k] = v }
        let transport = transport
        sent.withLock { n in
            n += 1
            o["n"] = .int(n)
            transport.publish(JSONValue.object(o).serialized())
        }
    }

    // MARK: incoming

    private func receive(_ payload: [UInt8]) async {
        let envelope: JSONValue
        do { envelope = try JSONValue.parse(payload) } catch {
            return invalid("not JSON: \(error)")
        }
        guard envelope["v"]?.intValue == Self.envelopeVersion else {
            return invalid("envelope version \(envelope["v"].map { $0.serializedString() } ?? "none"), this node reads \(Self.envelopeVersion)")
        }
        guard let node = envelope["node"]?.stringValue else { return invalid("no node id") }
        if node == nodeId {
            counters.withLock { $0.ownSkipped += 1 }
            return
        }
        if let n = envelope["n"]?.intValue {
            switch lastSeen.record(node: node, number: n) {
            case .next: break
            case .duplicate:
                counters.withLock { $0.duplicates += 1 }
                return
            case .gap(let missing):
                counters.withLock { $0.missed += UInt64(missing) }
                logger.error("\(missing) events from node \(node) never reached this node (before its number \(n)): the stream was trimmed past this node's position (realtime.redis.streamMaxLength), or they were dropped or lost on the way; their rooms' clients recover them by joining again")
            }
        }
        switch envelope["type"]?.stringValue {
        case "event":
            let event: DomainEvent
            do { event = try DomainEvent(wire: envelope["event"] ?? .null) } catch {
                return invalid("bad event: \(error)")
            }
            counters.withLock { $0.delivered += 1 }
            local.publish(event)
        case "logout":
            guard let userId = envelope["userId"]?.stringValue else { return invalid("logout without userId") }
            counters.withLock { $0.delivered += 1 }
            for socket in hub.sockets(inRoom: RealtimeConfiguration.userChannel(userId)) { socket.disconnect() }
        case let type? where TestModeControl.messageTypes.contains(type):
            await receiveTestControl(type, envelope, from: node)
        default:
            invalid("unknown type \(envelope["type"].map { $0.serializedString() } ?? "none")")
        }
    }

    private func invalid(_ why: String) {
        counters.withLock { $0.invalid += 1 }
        logger.warning("ignored a message on \(transport.destination): \(why)")
    }

    // MARK: /health, /metrics

    public var health: (status: String, degradedReason: String?) {
        let s = transport.stats.snapshot
        if s.healthy { return ("ok", nil) }
        let reading = transport is RedisStream ? "reader" : "subscriber"
        let down = [s.publisherReady ? nil : "publisher", s.subscriberReady ? nil : reading].compactMap { $0 }.joined(separator: " and ")
        return ("down", "no \(down) connection to \(transport.configuration.url) (\(s.lastError ?? "connecting")); events reach this node's sockets only")
    }

    public func render(into out: inout PrometheusText) {
        let s = transport.stats.snapshot
        let c = counters.current
        out.single("touchsync_redis_up", type: "gauge", help: "1 while both Redis connections (publisher, and stream reader or subscriber) are ready.", s.healthy ? 1 : 0)
        out.family("touchsync_redis_publishes_total", type: "counter",
                   help: "Domain events published to other nodes by outcome: published (Redis answered), dropped (never sent: realtime.redis.maxPending* or maxMessageBytes), failed (lost with the connection or refused).")
        out.sample("touchsync_redis_publishes_total", ["outcome": "published"], Double(s.published))
        out.sample("touchsync_redis_publishes_total", ["outcome": "dropped"], Double(s.publishDropped))
        out.sample("touchsync_redis_publishes_total", ["outcome": "failed"], Double(s.publishFailed))
        out.single("touchsync_redis_publish_queue_depth", type: "gauge", help: "Events waiting to be published (queued or unanswered).", Double(s.pending))
        out.family("touchsync_redis_received_total", type: "counter",
                   help: "Messages received from Redis by outcome: delivered (handed to this node's broadcaster), own (this node's, skipped), duplicate (already received: a re-sent XADD), dropped (realtime.redis.maxInboundBacklog), invalid.")
        out.sample("touchsync_redis_received_total", ["outcome": "delivered"], Double(c.delivered))
        out.sample("touchsync_redis_received_total", ["outcome": "own"], Double(c.ownSkipped))
        out.sample("touchsync_redis_received_total", ["outcome": "duplicate"], Double(c.duplicates))
        out.sample("touchsync_redis_received_total", ["outcome": "dropped"], Double(c.dropped))
        out.sample("touchsync_redis_received_total", ["outcome": "invalid"], Double(c.invalid))
        out.single("touchsync_redis_missed_total", type: "counter",
                   help: "Messages of other nodes this node never received, from the gaps in their numbers: a stream trimmed past this node's position (realtime.redis.streamMaxLength), or publishes dropped or lost.",
                   Double(c.missed))
        out.single("touchsync_redis_reconnects_total", type: "counter", help: "Redis connections re-established after a loss or failed attempts.",
                   Double(s.reconnects))
    }
}
