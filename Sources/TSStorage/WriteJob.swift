/// A queued `Database.write` call, type-erased for the writer thread.
protocol WriteJob: AnyObject {
    /// True for a maintenance job (`Database.maintenance`): the writer runs it alone, outside
    /// any transaction.
    var runsOutsideTransaction: Bool { get }
    /// Runs the job's body on the writer connection (inside its SAVEPOINT). Returns true on success.
    func execute(on connection: SQLConnection) -> Bool
    /// Runs the job's body with no savepoint of its own: the caller (the PostgreSQL batch runner)
    /// manages the savepoint around it. Returns true on success.
    func executeBare(on connection: SQLConnection) -> Bool
    /// The error the last `execute` ended with (nil after a success).
    var failure: (any Error)? { get }
    /// Replaces the job's outcome with `error` (its transaction was lost or failed to commit).
    func fail(_ error: any Error)
    /// Resumes the caller with the outcome. Called exactly once, after the batch's COMMIT, on the
    /// writer thread, for the jobs of a batch in their order: so in commit order overall.
    func complete()
}

/// One `write` call: its body, its outcome, and the continuation waiting for it.
///
/// `@unchecked Sendable` invariant: `outcome` is written only by the writer thread (in
/// `execute`/`fail`) and then read by that same thread in `complete`; the continuation is
/// resumed exactly once, from `complete`. The job crosses threads only through the
/// lock-protected write queue, which orders the enqueueing thread's writes before the writer's reads.
final class TypedWriteJob<T: Sendable>: WriteJob, @unchecked Sendable {
    private let body: @Sendable (SQLConnection) throws -> T
    private let continuation: CheckedContinuation<T, any Error>
    private var outcome: Result<T, any Error>?
    let runsOutsideTransaction: Bool
    /// Called with the committed result on the writer thread, before the caller resumes.
    private let committed: (@Sendable (T) -> Void)?

    init(body: @escaping @Sendable (SQLConnection) throws -> T, continuation: CheckedContinuation<T, any Error>,
         outsideTransaction: Bool = false, committed: (@Sendable (T) -> Void)? = nil) {
        self.body = body
        self.continuation = continuation
        self.runsOutsideTransaction = outsideTransaction
        self.committed = committed
    }

    func execute(on connection: SQLConnection) -> Bool {
        do {
            let value = runsOutsideTransaction ? try body(connection) : try connection.savepoint { try body(connection) }
            outcome = .success(value)
            return true
        } catch {
            outcome = .failure(error)
            return false
        }
    }

    func executeBare(on connection: SQLConnection) -> Bool {
        do {
            outcome = .success(try body(connection))
            return true
        } catch {
            outcome = .failure(error)
            return false
        }
    }

    func fail(_ error: any Error) {
        outcome = .failure(error)
    }

    var failure: (any Error)? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    func complete() {
        if let committed, case .success(let value) = outcome { committed(value) }
        continuation.resume(with: outcome ?? .failure(StorageError.misuse("write job was never executed")))
    }
}
