import Dispatch
import Logging
import TSSync

/// Whether a networked database (PostgreSQL) is reachable, and the reconnection loop while it is not.
///
/// - Up: storage threads use their connections; one that finds its connection broken reconnects
///   inline (`ensureUsable`), and only if that fails reports the database lost.
/// - Down (`reportLost`): `Database.read`/`write` refuse at once with `DatabaseUnavailableError`
///   (503 over HTTP) — nothing queues behind a dead server — and `/health` says degraded. A probe
///   thread (`ts-db-reconnect`) tries a fresh connection after `initialBackoff`, doubling the wait
///   after each failure up to `maxBackoff`; when one succeeds the database is up again and the
///   storage threads reconnect on their next job.
/// - One log line when lost and one when back (plus one per 10 failed attempts while down).
///
/// `@unchecked Sendable` invariant: `down`, `closing`, `backoff` and the counters are only touched
/// with `condition` locked; `probe` and the settings are immutable; `thread` is written in `init`.
final class ConnectionMonitor: @unchecked Sendable {
    private let condition = Condition()
    private var down: (since: UInt64, reason: String)?
    private var closing = false
    private var backoff: Duration
    private var attempts = 0
    private var losses: UInt64 = 0
    private let initialBackoff: Duration
    private let maxBackoff: Duration
    private let logger: Logger
    private let name: String
    private let probe: @Sendable () throws -> Void
    private var thread: SpawnedThread?

    /// `probe` opens (and closes) a fresh connection, throwing when the server does not answer.
    init(name: String, initialBackoff: Duration, maxBackoff: Duration, logger: Logger, probe: @escaping @Sendable () throws -> Void) throws {
        self.name = name
        self.initialBackoff = max(.milliseconds(1), initialBackoff)
        self.maxBackoff = max(self.initialBackoff, maxBackoff)
        self.backoff = self.initialBackoff
        self.logger = logger
        self.probe = probe
        thread = try SpawnedThread.spawn(name: "ts-db-reconnect", stackSize: 1 << 20) { [self] in self.runLoop() }
    }

    /// The error to refuse a request with while the database is down; nil while it is up.
    func unavailableError() -> DatabaseUnavailableError? {
        condition.withLock {
            guard let down else { return nil }
            return DatabaseUnavailableError(reason: down.reason, retryAfterSeconds: max(1, backoff.components.seconds))
        }
    }

    var isDown: Bool { condition.withLock { down != nil } }
    /// Times the database was lost since start (for tests and metrics).
    var lossCount: UInt64 { condition.withLock { losses } }

    /// Marks the database down (if it was up) and wakes the reconnection loop. Returns the error
    /// for the caller to fail its request with.
    @discardableResult
    func reportLost(_ error: any Error) -> DatabaseUnavailableError {
        let message = (error as? StorageError)?.message ?? "\(error)"
        let reason = "\(name) is unreachable: \(message)"
        let wasUp: Bool = condition.withLock {
            guard down == nil else { return false }
            down = (DispatchTime.now().uptimeNanoseconds, reason)
            backoff = initialBackoff
            attempts = 0
            losses &+= 1
            condition.broadcast()
            return true
        }
        if wasUp {
            logger.error("storage: lost the connection to \(name) (\(message)); requests get 503 until it is back, retrying with backoff \(initialBackoff)…\(maxBackoff)")
        }
        return unavailableError() ?? DatabaseUnavailableError(reason: reason, retryAfterSeconds: 1)
    }

    /// Stops the reconnection loop (idempotent).
    func close() {
        condition.withLock {
            closing = true
            condition.broadcast()
        }
        thread?.join()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while down == nil && !closing { condition.wait() }
            if closing { condition.unlock(); return }
            // Wait out the backoff (woken early only by close).
            let wait = backoff
            let start = DispatchTime.now().uptimeNanoseconds
            while !closing {
                let elapsed = Duration.nanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- start))
                if elapsed >= wait { break }
                condition.wait(timeout: wait - elapsed)
            }
            if closing { condition.unlock(); return }
            condition.unlock()

            var failure: (any Error)?
            do { try probe() } catch { failure = error }

            condition.lock()
            if let failure {
                attempts += 1
                backoff = min(backoff * 2, maxBackoff)
                let n = attempts
                if let down {
                    let message = (failure as? StorageError)?.message ?? "\(failure)"
                    self.down = (down.since, "\(name) is unreachable: \(message)")
                }
                condition.unlock()
                if n % 10 == 0 {
                    logger.warning("storage: \(name) still unreachable after \(n) attempts; next attempt in \(min(backoff, maxBackoff))")
                }
            } else {
                let since = down?.since ?? DispatchTime.now().uptimeNanoseconds
                down = nil
                backoff = initialBackoff
                let n = attempts + 1
                condition.unlock()
                let ms = (DispatchTime.now().uptimeNanoseconds &- since) / 1_000_000
                logger.notice("storage: \(name) is reachable again after \(ms / 1000).\(ms % 1000 / 100)s (\(n) attempts); serving requests")
            }
        }
    }
}

extension ConnectionMonitor {
    /// Checks that `connection` can be used for a job right now: refuses while the database is
    /// down, and replaces a connection libpq found broken (a server restart) with a fresh one —
    /// failing that, the database is reported lost. Runs on the storage thread owning `connection`.
    func ensureUsable(_ connection: SQLConnection) throws {
        if let error = usabilityError(connection) { throw error }
    }

    func usabilityError(_ connection: SQLConnection) -> DatabaseUnavailableError? {
        if let error = unavailableError() { return error }
        do { try connection.backend.reconnectIfBroken() } catch { return reportLost(error) }
        return nil
    }

    /// Runs a read snapshot on a PostgreSQL reader: a connection found dead on the way (the server
    /// restarted since its last use) is reconnected and the read, which changes nothing, run once
    /// more; if that fails too the database is reported lost.
    func resilientSnapshot(_ connection: SQLConnection, _ body: (SQLConnection) throws -> Void) throws {
        var attempt = 0
        while true {
            try ensureUsable(connection)
            do {
                try Database.snapshot(connection, body)
                return
            } catch let error as StorageError where error.isConnectionLost {
                attempt += 1
                if attempt >= 2 { throw reportLost(error) }
            }
        }
    }
}
