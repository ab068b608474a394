import Logging

/// Caps the open connections per client address (IP, without the port), so one address cannot
/// take every connection slot: past `maxPerAddress`, a new connection from that address is
/// refused (the listener answers it with its reject response — a canned HTTP 503 — and closes
/// it) while other addresses are still served. Refusals are logged, at most one line per
/// `logInterval` with the number suppressed in between.
///
/// Thread-safe: `acquire` runs on the accept loop, `release` on the connection's loop.
public final class ConnectionAddressCap: Sendable {
    public let maxPerAddress: Int
    let logger: Logger
    let clock: any MonotonicClock
    let logInterval: UInt64

    private struct State {
        var counts: [String: Int] = [:]
        var lastLog: UInt64?
        var suppressed = 0
    }
    private let state = LockedValue(State())

    public init(maxPerAddress: Int, logger: Logger = Logger(label: "touchsync.listener"), clock: any MonotonicClock = SystemClock(),
                logInterval: UInt64 = 10_000_000_000) {
        self.maxPerAddress = maxPerAddress
        self.logger = logger
        self.clock = clock
        self.logInterval = logInterval
    }

    /// The address part of `remote` ("ip:port" → "ip", "[v6]:port" → "v6").
    public static func host(of remote: String) -> String {
        if remote.hasPrefix("["), let close = remote.firstIndex(of: "]") {
            return String(remote[remote.index(after: remote.startIndex)..<close])
        }
        if let colon = remote.lastIndex(of: ":") { return String(remote[..<colon]) }
        return remote
    }

    /// Open connections from `host` (tests, metrics).
    public func count(host: String) -> Int { state.withLock { $0.counts[host] ?? 0 } }

    /// Counts a new connection from `remote`; false (nothing counted) when its address is at the cap.
    public func acquire(_ remote: String) -> Bool {
        guard maxPerAddress > 0 else { return true }
        let host = Self.host(of: remote)
        let now = clock.now()
        let (admitted, logSuppressed): (Bool, Int?) = state.withLock { s in
            let n = s.counts[host] ?? 0
            if n < maxPerAddress {
                s.counts[host] = n + 1
                return (true, nil)
            }
            if let last = s.lastLog, now &- last < logInterval {
                s.suppressed += 1
                return (false, nil)
            }
            s.lastLog = now
            let suppressed = s.suppressed
            s.suppressed = 0
            return (false, suppressed)
        }
        if let suppressed = logSuppressed {
            let more = suppressed > 0 ? " (\(suppressed) more refusals not logged)" : ""
            logger.warning("refused a connection from \(host): \(maxPerAddress) connections from that address are open (server.maxConnectionsPerAddress); answered 503 and closed\(more)")
        }
        return admitted
    }

    /// Releases a connection counted by `acquire`.
    public func release(_ remote: String) {
        guard maxPerAddress > 0 else { return }
        let host = Self.host(of: remote)
        state.withLock { s in
            guard let n = s.counts[host] else { return }
            if n <= 1 { s.counts[host] = nil } else { s.counts[host] = n - 1 }
        }
    }
}
