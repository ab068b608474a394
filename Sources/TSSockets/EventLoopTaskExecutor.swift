/// Runs Swift concurrency jobs on an `EventLoop`'s thread (a task executor, SE-0417).
///
/// A request handler started with `Task(executorPreference: loopExecutor)` runs on the thread
/// that read its request: a handler that never suspends completes within the loop iteration
/// (no hop to the global pool and back, no eventfd wake-up), and one that awaits (e.g. a durable
/// write) resumes on the loop when the awaited work finishes. Actor-isolated code still runs on
/// its actor; only nonisolated async code follows the preference.
///
/// The cost is the usual one of inline execution: while a job runs, the loop serves no other
/// connection, so handlers must not block for long (CPU-heavy work belongs on its own queue, as
/// password hashing already is).
// @unchecked Sendable: the only stored property is the immutable `loop`, itself thread-safe.
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    public let loop: EventLoop

    public init(loop: EventLoop) {
        self.loop = loop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
