import TSSync

/// Notifications delivered so far (fed by `NotificationWorker.onDelivered`), and, when the APNs
/// provider is configured, its requests by outcome (`touchsync_apns_requests_total`).
public final class NotificationCounter: Sendable {
    private let box = LockedValue<UInt64>(0)
    private let outcomes = LockedValue<[String: UInt64]>([:])
    /// The APNs outcomes to export (every one, 0 included), empty when APNs is off.
    public let apnsOutcomes: [String]

    public init(apnsOutcomes: [String] = []) { self.apnsOutcomes = apnsOutcomes }

    public func add(_ n: Int) { box.withLock { $0 += UInt64(max(0, n)) } }
    public var delivered: UInt64 { box.withLock { $0 } }

    /// One APNs request ended with `outcome` (delivered, unregistered, bad_device_token, rejected, retried, failed).
    public func count(apnsOutcome outcome: String) { outcomes.withLock { $0[outcome, default: 0] += 1 } }
    public func apnsCount(_ outcome: String) -> UInt64 { outcomes.withLock { $0[outcome] ?? 0 } }
}
