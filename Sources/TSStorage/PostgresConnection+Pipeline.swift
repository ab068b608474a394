import TSSync

/// Waits for PostgreSQL counted across a database's connections: each is one network round trip
/// a caller sat through (a statement, a prepare, a `BEGIN`), so a test can prove how many a route
/// costs and `/metrics` can show them.
public final class PostgresRoundTrips: Sendable {
    private let count = Atomic<UInt64>(0)

    public init() {}

    public var value: UInt64 { count.load(ordering: .relaxed) }

    func add() { count.add(1, ordering: .relaxed) }
}

#if canImport(CPostgres)
import CPostgres

/// Reads in fewer round trips, with libpq's pipeline mode
/// (https://www.postgresql.org/docs/15/libpq-pipeline-mode.html; libpq 14 or later).
///
/// A read runs in a snapshot (`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` … `COMMIT`,
/// `Database.snapshot`), which on the wire was two more round trips around the read's own
/// statements. Now:
///
/// - the `BEGIN` is held (`pendingReadBegin`) and sent in one pipeline with the read's first
///   statement, both before one sync: one round trip for both, and none at all when the read runs
///   no statement;
/// - the `COMMIT` of such a snapshot is sent in a pipeline without waiting for its answer
///   (`commitInFlight`): the read's result goes back to its caller at once, and the answer, long
///   arrived by then, is read before the connection's next command (`settle`). A read-only
///   transaction has nothing to lose at `COMMIT`; a connection lost meanwhile is noticed by that
///   next command, as it would have been.
///
/// - statements a read announces with `SQLConnection.prefetch` (those whose arguments do not
///   depend on an earlier statement's rows) go in the same pipeline as the next statement it
///   runs; their results wait until the read asks for them.
///
/// A read of one statement is thus one round trip instead of three; an authenticated read (the
/// token's user, then the route's query, announced first) one instead of four.
extension PostgresConnection {
    /// Reads the answer of a `COMMIT` sent without waiting, and leaves pipeline mode. Not counted
    /// in `roundTrips`: it went out with the previous read and has nearly always arrived by now.
    func settle() throws {
        guard commitInFlight else { return }
        commitInFlight = false
        let results = collectUntilSync()
        defer { results.forEach { PQclear($0) } }
        _ = PQexitPipelineMode(handle)
        // The snapshot's reads had all succeeded; a failed COMMIT of a read-only transaction
        // leaves nothing to undo. A lost connection shows in the status, for the next command.
        if let commit = results.first, PQresultStatus(commit) != PGRES_COMMAND_OK {
            try check(commit, sql: "COMMIT")
        }
    }

    /// Sends a held `BEGIN` on its own (a statement that cannot join it in a pipeline, e.g. a
    /// savepoint inside a read).
    func sendPendingBegin() throws {
        guard let begin = pendingReadBegin else { return }
        pendingReadBegin = nil
        roundTrips?.add()
        let result = PQexec(handle, begin)
        defer { PQclear(result) }
        try check(result, sql: begin)
        readSnapshotOpen = true
    }

    /// Sends, in one pipeline before one sync: the held `BEGIN`, the statement asked for, and the
    /// statements announced by `prefetch` (kept in `prefetched`); returns the statement's result
    /// (the caller checks and clears it). One round trip.
    func pipelined(_ sql: String, _ args: [SQLValue], _ statement: Prepared) throws -> OpaquePointer? {
        let begin = pendingReadBegin
        pendingReadBegin = nil
        let queued = prefetchQueue
        prefetchQueue = []
        // Prepared first: PQprepare waits for its answer, which pipeline mode does not allow.
        var extra: [(sql: String, args: [SQLValue], statement: Prepared)] = []
        for q in queued {
            guard let p = try? preparedStatement(q.sql), p.parameterCount == q.args.count else { continue }  // it fails again when asked for
            extra.append((q.sql, q.args, p))
        }
        roundTrips?.add()
        guard PQenterPipelineMode(handle) == 1 else { try check(nil, sql: sql); return nil }
        var sent = begin.map { PQsendQueryParams(handle, $0, 0, nil, nil, nil, nil, 0) == 1 } ?? true
        sent = sent && send(statement, args)
        for e in extra where sent { sent = send(e.statement, e.args) }
        sent = sent && PQpipelineSync(handle) == 1
        var results = sent ? collectUntilSync() : []
        _ = PQexitPipelineMode(handle)
        let expected = (begin == nil ? 0 : 1) + 1 + extra.count
        guard sent, results.count == expected else {
            results.forEach { PQclear($0) }
            try check(nil, sql: sql)  // libpq's message: the connection failed while sending or reading
            return nil
        }
        if begin != nil {
            let beginResult = results.removeFirst()
            defer { PQclear(beginResult) }
            if PQresultStatus(beginResult) != PGRES_COMMAND_OK {
                results.forEach { PQclear($0) }  // PGRES_PIPELINE_ABORTED: none of them ran
                try check(beginResult, sql: begin)
            }
            readSnapshotOpen = true
        }
        let result = results.removeFirst()
        for (e, r) in zip(extra, results) { prefetched.append((e.sql, e.args, r)) }
        return result
    }

    /// Announces a statement the read will run with these arguments, so it travels with the next
    /// one that needs an answer (`SQLConnection.prefetch`). Only inside a read snapshot: elsewhere
    /// (and past a few) it is ignored and runs when asked for, as usual.
    func prefetch(_ sql: String, _ args: [SQLValue]) {
        guard pendingReadBegin != nil || readSnapshotOpen, prefetchQueue.count + prefetched.count < 8 else { return }
        prefetchQueue.append((sql, args))
    }

    /// The result of a prefetched statement with these arguments, if one is waiting.
    func takePrefetched(_ sql: String, _ args: [SQLValue]) -> OpaquePointer? {
        guard !prefetched.isEmpty, let i = prefetched.firstIndex(where: { $0.sql == sql && $0.args == args }) else { return nil }
        return prefetched.remove(at: i).result
    }

    /// Forgets what was prefetched and not asked for (the snapshot ended, or the read failed).
    func dropPrefetched() {
        prefetchQueue.removeAll()
        for p in prefetched { PQclear(p.result) }
        prefetched.removeAll()
    }

    /// Sends `COMMIT` and returns without its answer (`settle` reads it).
    func sendCommitWithoutWaiting() throws {
        guard PQenterPipelineMode(handle) == 1 else { return try executeScript("COMMIT") }
        guard PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1, PQpipelineSync(handle) == 1, PQflush(handle) == 0 else {
            // Not sent whole: read what there is, and let COMMIT report the problem the usual way.
            collectUntilSync().forEach { PQclear($0) }
            _ = PQexitPipelineMode(handle)
            return try executeScript("COMMIT")
        }
        commitInFlight = true
    }

    /// The results of a pipeline up to its sync, in order (one per query; the sync itself and the
    /// nulls that end each query's results are consumed). Bounded: a broken connection gives
    /// nulls or errors, never an endless stream.
    private func collectUntilSync() -> [OpaquePointer] {
        var out: [OpaquePointer] = []
        var nulls = 0
        while nulls < 16 && out.count < 16 {
            guard let r = PQgetResult(handle) else {
                nulls += 1
                continue
            }
            if PQresultStatus(r) == PGRES_PIPELINE_SYNC {
                PQclear(r)
                break
            }
            out.append(r)
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        return out
    }
}
#endif
