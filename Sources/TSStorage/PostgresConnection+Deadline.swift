#if canImport(CPostgres)
import CPostgres
import Dispatch
import TSSync  // poll(2), shutdown(2)

/// Every call on a connection has a total deadline, so that no storage thread waits forever on a
/// server that stopped answering. The network bounds (`networkBounds`) end a connection whose
/// peer is gone — unacknowledged bytes, unanswered keepalives — but not one whose peer's kernel
/// still acknowledges while the server itself does nothing (stopped, frozen, swapping): there only
/// a clock on our side helps.
///
/// libpq's asynchronous calls (https://www.postgresql.org/docs/15/libpq-async.html) do what
/// `PQexec`… do, with `poll(2)` on the connection's socket bounded by the deadline in between:
/// `statement_timeout` (the server cancels a statement running that long and answers with an
/// error) plus `connect_timeout` as the margin for that answer to arrive. Past the deadline the
/// socket is shut down, libpq sees the connection end, the call fails as a lost connection, and
/// the storage thread reconnects or reports the database unreachable (`ConnectionMonitor`).
/// With `database.statementTimeout` 0 (no limit) calls wait as long as the server takes.
extension PostgresConnection {
    /// The longest one call may take, or nil without a statement timeout.
    var callDeadline: Duration? {
        let statement = configuration.postgresStatementTimeout
        guard statement > .zero else { return nil }
        return statement + .seconds(max(1, configuration.postgresConnectTimeout.components.seconds))
    }

    /// Sends with `send` (a `PQsend…` call) and collects the results as `PQexec` would: the first
    /// error, else the last result; nil when nothing could be sent (`PQerrorMessage` says why).
    func exchange(_ sql: String?, _ send: (OpaquePointer) -> Int32) throws -> OpaquePointer? {
        guard send(handle) == 1 else { return nil }
        let deadline = callDeadlineInstant()
        // A large query may not fit the socket's buffer: flush, reading meanwhile (libpq's advice).
        while true {
            let flushed = PQflush(handle)
            if flushed <= 0 { break }
            let ready = try awaitSocket(events: Int16(POLLIN | POLLOUT), deadline: deadline, sql: sql)
            if ready & Int16(POLLIN) != 0 && PQconsumeInput(handle) == 0 { break }
        }
        var error: OpaquePointer?
        var last: OpaquePointer?
        while true {
            try awaitResult(deadline: deadline, sql: sql)
            guard let result = PQgetResult(handle) else { break }
            if error != nil {
                PQclear(result)
            } else if PQresultStatus(result) == PGRES_FATAL_ERROR {
                PQclear(last)
                last = nil
                error = result
            } else {
                PQclear(last)
                last = result
            }
            if PQstatus(handle) != CONNECTION_OK && PQisBusy(handle) == 1 { break }
        }
        return error ?? last
    }

    /// When a call started now must be over (`DispatchTime` nanoseconds), or nil without a deadline.
    func callDeadlineInstant() -> UInt64? {
        callDeadline.map { DispatchTime.now().uptimeNanoseconds &+ UInt64($0.wholeMilliseconds) * 1_000_000 }
    }

    /// Reads until `PQgetResult` can answer without blocking, bounded by the deadline.
    func awaitResult(deadline: UInt64?, sql: String?) throws {
        while PQisBusy(handle) == 1 {
            _ = try awaitSocket(events: Int16(POLLIN), deadline: deadline, sql: sql)
            // 0: the connection broke; PQgetResult reports it without waiting.
            if PQconsumeInput(handle) == 0 { return }
        }
    }

    /// Waits until the socket is ready for `events` or the deadline passes; past it the socket is
    /// shut down (libpq then sees the connection closed) and the call fails as a lost connection.
    private func awaitSocket(events: Int16, deadline: UInt64?, sql: String?) throws -> Int16 {
        let fd = PQsocket(handle)
        guard fd >= 0 else { return events }  // no socket: the next libpq call reports the broken connection
        while true {
            var timeoutMs: Int32 = -1
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                if now >= deadline { break }
                timeoutMs = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let n = poll(&entry, 1, timeoutMs)
            if n > 0 { return entry.revents }
            if n < 0 && errno != EINTR { return events }  // let libpq meet (and report) the error
        }
        _ = shutdown(fd, Int32(SHUT_RDWR))
        _ = PQconsumeInput(handle)
        while let result = PQgetResult(handle) { PQclear(result) }
        let limit = callDeadline.map { "\($0)" } ?? "its deadline"
        throw StorageError.postgres(sqlState: nil, message: "no answer from PostgreSQL at \(redactedURL) within \(limit) "
                                    + "(database.statementTimeout + database.connectTimeout); the connection was closed",
                                    sql: sql, connectionLost: true)
    }
}
#endif
