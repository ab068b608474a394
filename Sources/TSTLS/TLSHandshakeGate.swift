import TSSync

/// Bounds the TLS handshakes in progress across the server (`tls.maxConcurrentHandshakes`):
/// a handshake costs a private-key operation, so a flood of ClientHellos must not take every
/// core. Past the bound a new connection is closed at once with a log line. Thread-safe.
public final class TLSHandshakeGate: Sendable {
    /// 0: unbounded.
    public let maxConcurrent: Int
    private let inProgress = LockedValue(0)

    public init(maxConcurrent: Int) { self.maxConcurrent = maxConcurrent }

    /// Handshakes currently counted.
    public var current: Int { inProgress.current }

    /// Takes a slot; false when all `maxConcurrent` are taken.
    public func tryAcquire() -> Bool {
        inProgress.withLock { n in
            if maxConcurrent > 0 && n >= maxConcurrent { return false }
            n += 1
            return true
        }
    }

    public func release() { inProgress.withLock { $0 -= 1 } }
}
