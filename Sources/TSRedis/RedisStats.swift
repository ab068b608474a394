import TSSync

/// Counters and state of the pub/sub client, readable from any thread (`/metrics`, `/health`).
public final class RedisStats: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// PUBLISHes Redis answered.
        public var published: UInt64 = 0
        /// Publishes dropped without being sent: the pending queue was full (`maxPendingPublishes`
        /// / `maxPendingBytes`), or the payload was over `maxMessageBytes`.
        public var publishDropped: UInt64 = 0
        /// Publishes sent whose outcome is unknown or negative: the connection was lost before
        /// the answer, or Redis answered with an error.
        public var publishFailed: UInt64 = 0
        /// Messages received on the subscribed channel (own ones included).
        public var received: UInt64 = 0
        /// Successful reconnects after a lost or failed connection (either connection).
        public var reconnects: UInt64 = 0
        public var publisherReady = false
        public var subscriberReady = false
        /// Publishes waiting (queued or unanswered).
        public var pending: Int = 0
        /// The last failure, "publisher: …" / "subscriber: …".
        public var lastError: String?

        public var healthy: Bool { publisherReady && subscriberReady }
    }

    private let state = LockedValue(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.current }

    func count(_ field: WritableKeyPath<Snapshot, UInt64>, by n: UInt64 = 1) { state.withLock { $0[keyPath: field] &+= n } }
    func set(_ body: (inout Snapshot) -> Void) { state.withLock { body(&$0) } }
    func setError(_ text: String) { state.withLock { $0.lastError = text } }
}
