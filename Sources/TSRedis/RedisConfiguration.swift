/// Settings of the pub/sub client (`realtime.redis*` in TSApp's RedisEventBridge+Settings.swift; docs/limits.md).
public struct RedisConfiguration: Sendable {
    public var url: RedisURL
    /// The first reconnect delay; each failed attempt doubles it up to `reconnectMaxDelay`.
    public var reconnectMinDelay: Duration = .milliseconds(100)
    public var reconnectMaxDelay: Duration = .seconds(5)
    /// Total time from connect(2) to a ready connection (AUTH and SUBSCRIBE answered); past it the attempt fails.
    public var connectTimeout: Duration = .seconds(5)
    /// With the connection idle, a PING this often; no byte back by the next one and the connection is closed.
    public var pingInterval: Duration = .seconds(5)
    /// Publishes waiting (unsent while disconnected, or sent and unanswered) at most; past it a publish is dropped and counted.
    public var maxPendingPublishes: Int = 10_000
    /// Bytes of those publishes at most.
    public var maxPendingBytes: Int = 16 << 20
    /// The largest message payload received or published (a larger incoming one is a protocol error, a larger outgoing one is dropped).
    public var maxMessageBytes: Int = 16 << 20
    /// Entries one `XREAD` asks for at most, on the stream reader's connection (0 elsewhere):
    /// its decoder accepts that many entries per reply.
    public var streamReadCount: Int = 0

    public init(url: RedisURL) { self.url = url }

    /// What the reply decoder accepts: one message of `maxMessageBytes` plus its channel name, or
    /// an `XREAD` reply of `streamReadCount` entries (`[[key, [[id, [field, value]], …]]]`, five
    /// levels deep) whose messages together stay within `maxMessageBytes` plus 64 KiB per entry
    /// (a larger batch fails the read; the reader then asks for one entry at a time).
    public var decoderLimits: RESPDecoder.Limits {
        let count = max(1, streamReadCount)
        return RESPDecoder.Limits(maxBulkBytes: maxMessageBytes, maxArrayCount: max(16, count), maxDepth: streamReadCount > 0 ? 6 : 4,
                                  maxLineBytes: 64 * 1024, maxValueBytes: maxMessageBytes + count * 64 * 1024)
    }
}

/// Reconnect delays: `min`, doubling, capped at `max` (no jitter: there are two connections per
/// node, not a thundering herd). Pure.
public struct RedisBackoff: Sendable, Equatable {
    public let minimum: Duration
    public let maximum: Duration
    public private(set) var failures = 0

    public init(minimum: Duration, maximum: Duration) {
        self.minimum = minimum
        self.maximum = max(minimum, maximum)
    }

    /// The delay before the next attempt, counting this failure.
    public mutating func nextDelay() -> Duration {
        var d = minimum
        var i = 0
        while i < failures && d < maximum {
            d = d * 2
            i += 1
        }
        failures += 1
        return min(d, maximum)
    }

    public mutating func reset() { failures = 0 }
}
