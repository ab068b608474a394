import TSSync

/// Notifications delivered so far (fed by `NotificationWorker.onDelivered`).
public final class NotificationCounter: Sendable {
    private let box = LockedValue<UInt64>(0)

    public init() {}

    public func add(_ n: Int) { box.withLock { $0 += UInt64(max(0, n)) } }
    public var delivered: UInt64 { box.withLock { $0 } }
}
