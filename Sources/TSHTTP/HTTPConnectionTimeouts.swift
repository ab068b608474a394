/// Pure timeout bookkeeping for one HTTP connection (no I/O, no clock of its own), so tests can
/// drive it with plain numbers or a `ManualClock`.
///
/// - While a request head is arriving: closed when it takes longer than `headerReadTimeout`
///   from its first byte.
/// - While idle between requests, or while a body makes no progress: closed after `idleTimeout`.
/// - While a handler runs: no timeout (the handler owns its latency).
public struct HTTPConnectionTimeouts: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case idle(since: UInt64)
        case readingHead(since: UInt64)
        case readingBody(lastProgress: UInt64)
        case processing
    }

    public enum Decision: Sendable, Equatable {
        case keepOpen
        case closeHeaderReadTimeout
        case closeIdleTimeout
    }

    public let headerReadTimeout: UInt64
    public let idleTimeout: UInt64
    public private(set) var phase: Phase

    public init(headerReadTimeout: UInt64, idleTimeout: UInt64, now: UInt64) {
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.phase = .idle(since: now)
    }

    /// Records the connection's state after bytes arrived (`bytesArrived`) or a response finished.
    public mutating func update(now: UInt64, progress: HTTPParserProgress, inFlight: Bool, bytesArrived: Bool) {
        if inFlight {
            phase = .processing
            return
        }
        switch progress {
        case .idle:
            if case .idle = phase { return }
            phase = .idle(since: now)
        case .head:
            if case .readingHead = phase { return }
            phase = .readingHead(since: now)
        case .body:
            if case .readingBody = phase, !bytesArrived { return }
            phase = .readingBody(lastProgress: now)
        }
    }

    /// What to do at `now`.
    public func decision(now: UInt64) -> Decision {
        switch phase {
        case .processing:
            return .keepOpen
        case .idle(let since):
            return now &- since >= idleTimeout && now >= since ? .closeIdleTimeout : .keepOpen
        case .readingHead(let since):
            return now &- since >= headerReadTimeout && now >= since ? .closeHeaderReadTimeout : .keepOpen
        case .readingBody(let last):
            return now &- last >= idleTimeout && now >= last ? .closeIdleTimeout : .keepOpen
        }
    }
}
