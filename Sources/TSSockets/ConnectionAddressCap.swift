/// Caps the open connections per client address (IP, without the port), so one address cannot
/// take every connection slot: past `maxPerAddress`, a new connection from that address is
/// refused (the listener answers it with its reject response — a canned HTTP 503 — closes it and
/// counts it in its `RefusalLog`) while other addresses are still served.
///
/// Thread-safe: `acquire` runs on the accept loop, `release` on the connection's loop.
public final class ConnectionAddressCap: Sendable {
    public let maxPerAddress: Int

    private struct State {
        var counts: [String: Int] = [:]
    }
    private let state = LockedValue(State())

    public init(maxPerAddress: Int) {
        self.maxPerAddress = maxPerAddress
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
        return state.withLock { s in
            let n = s.counts[host] ?? 0
            guard n < maxPerAddress else { return false }
            s.counts[host] = n + 1
            return true
        }
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
