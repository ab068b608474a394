import Dispatch

/// Group commit on PostgreSQL: the same shape as SQLite's (one transaction per batch, a SAVEPOINT
/// per job, callers resumed after COMMIT), plus what several writing nodes need
/// (docs/storage-postgres.md):
///
/// - A job failing with a serialization failure (40001) or a deadlock (40P01), or the connection
///   lost before COMMIT was sent, aborts the batch: it is rolled back and each of its jobs is run
///   again ALONE in its own transaction, up to `maxRetries` times. That is safe because a job body
///   only touches the database (the rule on `Database.write`): nothing it did survives a rollback.
/// - The connection lost DURING COMMIT is not retried: the server may have committed, so running the
///   jobs again could apply them twice. Those callers get `DatabaseUnavailableError` ("outcome
///   unknown" in the log).
/// - Other errors (unique violations, a job's own error) stay that job's error, as on SQLite.
extension WriterCore {
    private enum BatchOutcome {
        case finished(committed: Int, failed: Int, commitFailed: Bool)
        case retry(any Error)
    }

    func runPostgresBatch(_ batch: [any WriteJob], monitor: ConnectionMonitor) {
        let started = DispatchTime.now().uptimeNanoseconds
        var committed = 0
        var failed = 0
        var commitFailed = false
        var transactions: UInt64 = 0
        holdingConnection {
            if connectionClosed {
                failed = failClosed(batch)
            } else {
                switch attemptBatch(batch, monitor: monitor) {
                case .finished(let c, let f, let cf):
                    committed = c
                    failed = f
                    commitFailed = cf
                    if c > 0 { transactions = 1 }
                case .retry(let error):
                    logger.notice("postgres writer: batch of \(batch.count) rolled back (\(Self.shortReason(error))); re-running each job alone")
                    for job in batch {
                        if runAloneWithRetries(job, monitor: monitor) {
                            committed += 1
                            transactions += 1
                        } else {
                            failed += 1
                        }
                    }
                }
            }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds &- started
        updateStats { s in
            s.lastTransactionNanoseconds = elapsed
            s.totalTransactionNanoseconds &+= elapsed
            s.lastBatchSize = batch.count
            s.transactionsCommitted += transactions
            s.jobsCommitted += UInt64(committed)
            s.jobsFailed += UInt64(failed)
            if commitFailed { s.commitFailures += 1 }
        }
        for job in batch { job.complete() }
    }

    static func shortReason(_ error: any Error) -> String {
        guard let e = error as? StorageError else { return "\(error)" }
        if e.isConnectionLost { return "connection lost: \(e.message)" }
        return "SQLSTATE \(e.sqlState ?? "?"): \(e.message)"
    }

    /// A body that caught a PostgreSQL error itself (without a `savepoint`) returns normally but
    /// leaves its transaction aborted: it failed. The job gets an error saying so.
    private static func swallowedAnError(_ job: any WriteJob, _ connection: SQLConnection) -> Bool {
        #if canImport(CPostgres)
        guard let pg = connection.postgres, pg.isInFailedTransaction else { return false }
        job.fail(StorageError.postgres(sqlState: "25P02", message: "a statement of this write failed and its error was caught inside the job; "
                                       + "PostgreSQL aborts the transaction then (wrap the statement in connection.savepoint { } to go on after an expected error)"))
        return true
        #else
        return false
        #endif
    }

    private static func isRetryable(_ error: (any Error)?) -> Bool {
        guard let e = error as? StorageError else { return false }
        return e.isSerializationFailure || e.isConnectionLost
    }

    private func rollbackQuietly() {
        if connection.isInTransaction { try? connection.executeScript("ROLLBACK") }
    }

    private func attemptBatch(_ batch: [any WriteJob], monitor: ConnectionMonitor) -> BatchOutcome {
        if let error = monitor.usabilityError(connection) {
            for job in batch { job.fail(error) }
            return .finished(committed: 0, failed: batch.count, commitFailed: true)
        }
        // Round trips: the savepoint of each job is opened in the same simple-query message that
        // closes the previous one ("BEGIN; SAVEPOINT ts_job", then "RELEASE ts_job; SAVEPOINT ts_job"),
        // so a batch of n jobs costs n + 1 round trips besides the jobs' own statements (not 3n + 2).
        var succeeded: [any WriteJob] = []
        var failed = 0
        for (index, job) in batch.enumerated() {
            do {
                try connection.executeScript(index == 0 ? "BEGIN; SAVEPOINT ts_job" : "RELEASE ts_job; SAVEPOINT ts_job")
            } catch {
                rollbackQuietly()
                if Self.isRetryable(error) { return .retry(error) }
                for rest in batch[index...] { rest.fail(error) }
                for done in succeeded { done.fail(error) }
                return .finished(committed: 0, failed: batch.count, commitFailed: true)
            }
            if job.executeBare(on: connection) && !Self.swallowedAnError(job, connection) {
                succeeded.append(job)
            } else if Self.isRetryable(job.failure) {
                rollbackQuietly()
                return .retry(job.failure!)
            } else {
                failed += 1
                // Only this job's changes go; the transaction is usable again.
                if (try? connection.executeScript("ROLLBACK TO ts_job")) == nil || !connection.isInTransaction {
                    // A job ended the transaction itself (it must not) or the rollback failed: the
                    // earlier jobs' changes are gone; fail them and re-run nothing.
                    let error = StorageError(code: 1, message: "the write transaction ended inside a job of the same batch (a job must not COMMIT or ROLLBACK)")
                    rollbackQuietly()
                    for lost in succeeded { lost.fail(error) }
                    for rest in batch[(index + 1)...] { rest.fail(error) }
                    return .finished(committed: 0, failed: batch.count, commitFailed: true)
                }
            }
        }
        do {
            try connection.executeScript("COMMIT")
            return .finished(committed: succeeded.count, failed: failed, commitFailed: false)
        } catch let error as StorageError where error.isSerializationFailure {
            rollbackQuietly()
            return .retry(error)
        } catch {
            rollbackQuietly()
            let reported: any Error
            if let e = error as? StorageError, e.isConnectionLost {
                logger.error("postgres writer: connection lost during COMMIT of \(succeeded.count) jobs; their outcome is unknown, not retried")
                reported = monitor.reportLost(e)
            } else {
                logger.error("postgres writer: COMMIT failed", metadata: ["error": "\(error)", "jobs": "\(batch.count)"])
                reported = error
            }
            for job in succeeded { job.fail(reported) }
            return .finished(committed: 0, failed: failed + succeeded.count, commitFailed: true)
        }
    }

    /// One job in its own transaction, re-run on a retryable failure at most `maxRetries` times.
    private func runAloneWithRetries(_ job: any WriteJob, monitor: ConnectionMonitor) -> Bool {
        var attempt = 0
        while true {
            if let error = monitor.usabilityError(connection) {
                job.fail(error)
                return false
            }
            var committing = false
            do {
                try connection.executeScript("BEGIN")
                if job.executeBare(on: connection) && !Self.swallowedAnError(job, connection) {
                    committing = true
                    try connection.executeScript("COMMIT")
                    return true
                }
                let error = job.failure
                rollbackQuietly()
                if Self.isRetryable(error) && attempt < maxRetries {
                    attempt += 1
                    continue
                }
                if let e = error as? StorageError, e.isConnectionLost { job.fail(monitor.reportLost(e)) }
                return false
            } catch {
                rollbackQuietly()
                let lost = (error as? StorageError)?.isConnectionLost == true
                if Self.isRetryable(error) && !(lost && committing) && attempt < maxRetries {
                    attempt += 1
                    continue
                }
                job.fail(lost ? monitor.reportLost(error) : error)
                return false
            }
        }
    }
}
