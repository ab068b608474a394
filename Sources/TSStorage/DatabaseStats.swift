/// Counters for `/metrics`, a snapshot taken under the writer's lock.
public struct DatabaseStats: Sendable, Equatable {
    /// Jobs waiting in the write queue (not yet in a transaction).
    public var writeQueueDepth: Int = 0
    /// Wall time of the last write transaction, BEGIN to COMMIT (group commit or `writeSync`).
    public var lastTransactionNanoseconds: UInt64 = 0
    /// Jobs in the last group-commit batch.
    public var lastBatchSize: Int = 0
    /// Write transactions committed (each group-commit batch or `writeSync` counts once).
    public var transactionsCommitted: UInt64 = 0
    /// `write`/`writeSync` calls whose changes were committed.
    public var jobsCommitted: UInt64 = 0
    /// `write`/`writeSync` calls that ended in an error (their own, or their batch's).
    public var jobsFailed: UInt64 = 0
    /// COMMITs (or BEGINs) that failed, failing a whole batch.
    public var commitFailures: UInt64 = 0
    /// Sum of write-transaction durations, for an average.
    public var totalTransactionNanoseconds: UInt64 = 0

    public init() {}
}
