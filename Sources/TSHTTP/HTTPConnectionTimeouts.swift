/// Pure timeout bookkeeping for one HTTP connection (no I/O, no clock of its own), so tests can
/// drive it with plain numbers or a `ManualClock`.
///
/// - While a request head is arriving: closed when it takes longer than `headerReadTimeout`
///   from its first byte.
/// - While idle between requests: closed after `idleTimeout`.
/// - While a request body is arriving: answered 408 and closed when it takes longer than
///   `bodyReadTimeout` from the end of its head — a total deadline, not reset by trickled bytes.
/// - While a handler runs or its response is being written: no timeout here (the handler owns
///   its latency; the connection's outbound deadlines govern a client that does not read).
public struct HTTPConnectionTimeouts: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case idle(since: UInt64)
        case readingHead(since: UInt64)
        case readingBody(since: UInt64)
        case processing
    }

    public enum Decision: Sendable, Equatable {
        case keepOpen
        case closeHeaderReadTimeout
        case closeIdleTimeout
        /// Answer 408 and close.
        case closeBodyReadTimeout
    }

    public let headerReadTimeout: UInt64
    public let idleTimeout: UInt64
    public let bodyReadTimeout: UInt64
    public private(set) var phase: Phase

    public init(headerReadTimeout: UInt64, idleTimeout: UInt64, bodyReadTimeout: UInt64 = 30_000_000_000, now: UInt64) {
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.bodyReadTimeout = bodyReadTimeout
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
            if case .readingBody = phase { return }
            phase = .readingBody(since: now)
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
        case .readingBody(let since):
            return now &- since >= bodyReadTimeout && now >= since ? .closeBodyReadTimeout : .keepOpen
        }
    }
}
