import Dispatch
import TSSync

/// Long-polling the log: a request suspends until an event after its cursor is recorded or its
/// wait runs out, without holding a thread (`GET /api/test/events?wait=`, docs/test-mode.md).
extension RealtimeEventLog {
    /// How a `waitForEvent(after:timeoutMilliseconds:)` ended.
    public enum WaitOutcome: Sendable, Equatable {
        /// An event with a sequence number past the one waited after was recorded.
        case appended
        /// The wait ran out first.
        case timedOut
        /// `maxWaiters` requests were already waiting: the caller is refused rather than queued.
        case tooManyWaiters
    }

    public static let defaultMaxWaiters = 256

    /// A suspended long-poll: resumed exactly once, by `resumeWaiters` or by its timer,
    /// whichever removes it from the list first (both do so under the list's lock).
    struct Waiter {
        let after: Int64
        let continuation: CheckedContinuation<WaitOutcome, Never>
    }

    struct WaitList {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    /// Suspends the calling task until an event with a sequence number greater than `sequence`
    /// is recorded or `timeoutMilliseconds` pass: the continuation is resumed by `record` or by a
    /// timer on a Dispatch queue. Returns at once when such an event is already there, and
    /// refuses (`.tooManyWaiters`) past `maxWaiters`.
    ///
    /// The newest sequence number is read under the list's lock, and `record` takes that lock
    /// only after it has moved the sequence on: a waiter either sees the new event here or is
    /// in the list when `record` looks, so no event is missed.
    public func waitForEvent(after sequence: Int64, timeoutMilliseconds: Int) async -> WaitOutcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome, Never>) in
            enum Registration { case done(WaitOutcome), waiting(UInt64) }
            let registration: Registration = waitList.withLock { list in
                if lastSequence > sequence { return .done(.appended) }
                if timeoutMilliseconds <= 0 { return .done(.timedOut) }
                if list.waiters.count >= maxWaiters { return .done(.tooManyWaiters) }
                let id = list.nextID
                list.nextID &+= 1
                list.waiters[id] = Waiter(after: sequence, continuation: continuation)
                return .waiting(id)
            }
            switch registration {
            case .done(let outcome):
                continuation.resume(returning: outcome)
            case .waiting(let id):
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeoutMilliseconds)) { [self] in
                    if let w = waitList.withLock({ $0.waiters.removeValue(forKey: id) }) { w.continuation.resume(returning: .timedOut) }
                }
            }
        }
    }

    /// Resumes every waiter whose cursor the newest event has passed (called by `record`).
    func resumeWaiters() {
        let due: [Waiter] = waitList.withLock { list in
            guard !list.waiters.isEmpty else { return [] }
            let newest = lastSequence
            let ids = list.waiters.filter { $0.value.after < newest }.map(\.key)
            return ids.compactMap { list.waiters.removeValue(forKey: $0) }
        }
        // Outside the lock: a resumed request reads the log at once.
        for w in due { w.continuation.resume(returning: .appended) }
    }

    /// Long-polls suspended now.
    public var waiterCount: Int { waitList.withLock { $0.waiters.count } }
}
