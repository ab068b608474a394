/// Hooks for metrics. Called from event loop threads; implementations must be thread-safe and fast.
public protocol HTTPServerObserver: Sendable {
    /// A response was written (`routePattern` is nil when no route matched).
    func requestFinished(method: HTTPMethod, routePattern: String?, status: Int, durationNanoseconds: UInt64)
    /// An HTTP connection was accepted.
    func connectionOpened()
    /// An HTTP connection closed, or was handed to another protocol by an upgrade.
    func connectionClosed()
}

extension HTTPServerObserver {
    public func connectionOpened() {}
    public func connectionClosed() {}
}
