import TSSync

/// A queued read, type-erased for the reader threads.
protocol ReadJob: AnyObject {
    /// Runs the read on `connection` (already inside its snapshot transaction) and hands the
    /// outcome to the caller. Called exactly once, on a reader thread, unless `fail` is.
    func run(on connection: SQLConnection, snapshot: (SQLConnection, (SQLConnection) throws -> Void) throws -> Void)
    /// Hands `error` to the caller instead (the read never ran). Called at most once, instead of `run`.
    func fail(_ error: any Error)
}

/// One `Database.read` call: its body and the continuation of the suspended caller.
///
/// `@unchecked Sendable` invariant: the job crosses threads only through the reader pool's
/// lock-protected queue; exactly one reader thread takes it off the queue and then calls `run`
/// or (on close) one thread calls `fail`, so the continuation is resumed exactly once.
final class AsyncReadJob<T: Sendable>: ReadJob, @unchecked Sendable {
    private let body: @Sendable (SQLConnection) throws -> T
    private let continuation: CheckedContinuation<T, any Error>

    init(body: @escaping @Sendable (SQLConnection) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func run(on connection: SQLConnection, snapshot: (SQLConnection, (SQLConnection) throws -> Void) throws -> Void) {
        var value: T?
        do {
            try snapshot(connection) { c in value = try body(c) }
            continuation.resume(returning: value!)
        } catch {
            continuation.resume(throwing: error)
        }
    }

    func fail(_ error: any Error) { continuation.resume(throwing: error) }
}

/// A `Database.readSync` call: the caller's thread blocks on `done` until a reader thread has run
/// it. Only for threads that may block (CLI, migrations, seeding, tests), never an event loop.
///
/// `@unchecked Sendable` invariant: `outcome` is written once by the reader thread (or the closing
/// thread) under `done`'s lock, and read by the waiting caller under the same lock after it is set.
/// `body` is non-escaping in spirit: `readSync` does not return before the job has finished.
final class BlockingReadJob<T>: ReadJob, @unchecked Sendable {
    /// Dropped before the caller is woken: `readSync` passes a non-escaping closure, which must
    /// not outlive the call even while a reader thread still holds this job.
    private var body: ((SQLConnection) throws -> T)?
    private let done = Condition()
    private var outcome: Result<T, any Error>?

    init(body: @escaping (SQLConnection) throws -> T) { self.body = body }

    func run(on connection: SQLConnection, snapshot: (SQLConnection, (SQLConnection) throws -> Void) throws -> Void) {
        var value: T?
        let result: Result<T, any Error>
        do {
            guard let body else { throw StorageError.misuse("read job ran twice") }
            try snapshot(connection) { c in value = try body(c) }
            result = .success(value!)
        } catch {
            result = .failure(error)
        }
        finish(result)
    }

    func fail(_ error: any Error) { finish(.failure(error)) }

    private func finish(_ result: Result<T, any Error>) {
        body = nil
        done.withLock {
            outcome = result
            done.broadcast()
        }
    }

    /// Blocks the calling thread until the job ran (or failed).
    func wait() throws -> T {
        done.lock()
        while outcome == nil { done.wait() }
        let result = outcome!
        done.unlock()
        return try result.get()
    }
}
