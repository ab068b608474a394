import TSSync

/// A wait for a place in a room's delivery queue (`RealtimeBroadcaster`): finished by the room's
/// drain when it gets there (true: for a `room:join`, the batch is sent and the socket is in the
/// room's channel), or when the room's queue was full and the item was dropped (false).
/// Finished exactly once; `wait` may come before or after.
final class DeliveryTicket: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Bool, Never>)
        case done(Bool)
    }

    private let state = LockedValue(State.pending)

    func finish(_ delivered: Bool) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { s in
            switch s {
            case .pending:
                s = .done(delivered)
                return nil
            case .waiting(let c):
                s = .done(delivered)
                return c
            case .done:
                return nil
            }
        }
        waiter?.resume(returning: delivered)
    }

    func wait() async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let ready: Bool? = state.withLock { s in
                switch s {
                case .pending:
                    s = .waiting(c)
                    return nil
                case .waiting:
                    return false  // one waiter only
                case .done(let d):
                    return d
                }
            }
            if let ready { c.resume(returning: ready) }
        }
    }
}
