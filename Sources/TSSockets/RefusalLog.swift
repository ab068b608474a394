import Logging

/// Logs refusals of one kind (connections past a cap, failed TLS handshakes, Engine.IO handshakes
/// past a cap) at a bounded rate: the first refusal of a quiet period gets its own line, naming
/// its address and reason; the ones after it within `interval` are counted, and one summary line
/// at the end of the interval says how many there were, from how many addresses and why. So a
/// flood from one address writes at most one line per interval (plus the first) instead of one
/// per connection, and the operator still sees that it happened, how big it was and the setting
/// to look at.
///
/// Thread-safe. The summary is written by a task scheduled on the loop passed to `record` (any
/// loop of the server: it only logs); a loop that has shut down drops it, with nothing lost but
/// that line.
public final class RefusalLog: Sendable {
    /// What is refused, for the lines ("TLS handshakes", "connections").
    public let subject: String
    let logger: Logger
    let clock: any MonotonicClock
    /// Nanoseconds between lines.
    public let interval: UInt64
    /// Distinct addresses counted per interval at most (past it the line says "at least").
    let maxAddresses: Int

    private struct State {
        /// When the last line was written (nil: never).
        var lastLine: UInt64?
        var count = 0
        var addresses: Set<String> = []
        var addressesOverflowed = false
        /// Reason → refusals, in first-seen order for the line.
        var reasons: [(String, Int)] = []
        var summaryScheduled = false
        /// Refusals over the log's life (metrics, tests).
        var total = 0
    }

    private let state = LockedValue(State())

    public init(subject: String, logger: Logger, clock: any MonotonicClock = SystemClock(),
                interval: UInt64 = 10_000_000_000, maxAddresses: Int = 10_000) {
        self.subject = subject
        self.logger = logger
        self.clock = clock
        self.interval = max(1, interval)
        self.maxAddresses = max(1, maxAddresses)
    }

    /// Refusals recorded so far.
    public var total: Int { state.current.total }

    /// Counts one refusal of `address` for `reason` (a short text naming the setting, if any); logs
    /// it at once when no line was written within `interval`, else leaves it to the summary,
    /// which a task on `loop` writes when the interval ends.
    public func record(address: String, reason: String, loop: EventLoop?) {
        let now = clock.now()
        enum Step { case logNow, scheduleSummary(UInt64), counted }
        let step: Step = state.withLock { s in
            s.total += 1
            if let last = s.lastLine, now &- last < interval {
                s.count += 1
                if s.addresses.count < maxAddresses { s.addresses.insert(address) } else if !s.addresses.contains(address) {
                    s.addressesOverflowed = true
                }
                // A handful of reasons per line (a peer choosing its error text must not grow it).
                let key = s.reasons.count < 8 || s.reasons.contains(where: { $0.0 == reason }) ? reason : "other reasons"
                if let i = s.reasons.firstIndex(where: { $0.0 == key }) { s.reasons[i].1 += 1 } else { s.reasons.append((key, 1)) }
                guard !s.summaryScheduled else { return .counted }
                s.summaryScheduled = true
                return .scheduleSummary(last &+ interval &- now)
            }
            s.lastLine = now
            return .logNow
        }
        switch step {
        case .logNow:
            logger.notice("\(subject) refused: \(reason) (from \(address)); more within \(interval / 1_000_000_000) s are counted in one line")
        case .scheduleSummary(let delay):
            if let loop { loop.scheduleTask(in: delay) { [self] in writeSummary() } }
        case .counted:
            break
        }
    }

    /// Writes the summary of what was counted since the last line (if anything was).
    public func writeSummary() {
        let now = clock.now()
        let line: String? = state.withLock { s in
            s.summaryScheduled = false
            guard s.count > 0 else { return nil }
            let from = s.addressesOverflowed ? "at least \(s.addresses.count)" : "\(s.addresses.count)"
            let why = s.reasons.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
            let seconds = s.lastLine.map { Double(now &- $0) / 1e9 } ?? 0
            let text = "\(subject) refused: \(s.count) more in the last \(Int(seconds.rounded())) s from \(from) address\(s.addresses.count == 1 && !s.addressesOverflowed ? "" : "es") (\(why))"
            s.count = 0
            s.addresses = []
            s.addressesOverflowed = false
            s.reasons = []
            s.lastLine = now
            return text
        }
        if let line { logger.notice("\(line)") }
    }
}
