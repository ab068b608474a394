import TSSync

/// Bounds the TLS handshakes in progress, so no one address can keep the others from starting one.
///
/// Two bounds, because a pending handshake costs two very different amounts:
/// - A connection that has sent nothing yet costs a socket and its deadline timer (about 2 KiB of
///   server memory measured on Linux): the TLS session object is only made when the first
///   ClientHello byte arrives. These are bounded **per client
///   address** (`tls.maxHandshakesPerAddress`, counting every pending handshake of that address),
///   so silent connections from one address fill that address's share and nobody else's; the
///   total handshake deadline (`tls.handshakeTimeoutSeconds`) frees them.
/// - A handshake under way (ClientHello bytes received) holds a TLS session with its buffers
///   (about 48 KiB measured with OpenSSL 3) and costs a private-key operation: those are bounded
///   **across the server**
///   (`tls.maxConcurrentHandshakes`), so a flood of ClientHellos cannot take every core or much
///   memory. With the per-address bound well below it, one address can hold only a small part.
///
/// Past either bound the connection is closed at once with a log line. Thread-safe; the
/// per-address table holds only addresses with a pending handshake (at most `server.maxConnections`).
public final class TLSHandshakeGate: Sendable {
    /// Handshakes under way across the server; 0: unbounded.
    public let maxConcurrent: Int
    /// Pending handshakes (silent or under way) per client address; 0: unbounded.
    public let maxPerAddress: Int

    private struct State {
        var started = 0
        var pendingByAddress: [String: Int] = [:]
    }

    private let state = LockedValue(State())

    public init(maxConcurrent: Int, maxPerAddress: Int = 0) {
        self.maxConcurrent = maxConcurrent
        self.maxPerAddress = maxPerAddress
    }

    /// Handshakes under way (past their first byte) across the server.
    public var current: Int { state.current.started }

    /// Pending handshakes of `address`.
    public func pending(from address: String) -> Int { state.current.pendingByAddress[address] ?? 0 }

    /// At accept: counts a pending handshake of `address`; false when that address already has `maxPerAddress`.
    public func tryAdmit(address: String) -> Bool {
        state.withLock { s in
            let n = s.pendingByAddress[address] ?? 0
            if maxPerAddress > 0 && n >= maxPerAddress { return false }
            s.pendingByAddress[address] = n + 1
            return true
        }
    }

    /// At the first ClientHello byte: takes a server-wide slot; false when all `maxConcurrent` are taken.
    public func tryStart() -> Bool {
        state.withLock { s in
            if maxConcurrent > 0 && s.started >= maxConcurrent { return false }
            s.started += 1
            return true
        }
    }

    /// The handshake finished or its connection closed: frees what `tryAdmit` (and `tryStart`, when `started`) took.
    public func finish(address: String, started: Bool) {
        state.withLock { s in
            if started { s.started -= 1 }
            let n = (s.pendingByAddress[address] ?? 1) - 1
            s.pendingByAddress[address] = n > 0 ? n : nil
        }
    }
}
