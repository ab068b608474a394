/// A value known only after the objects that need it are built, set exactly once: the one way
/// this code base does "set once, later" (an event loop's executors known only once the listener
/// runs, the HTTP server for a `/metrics` closure registered before the server exists, a journal
/// writer that needs the object it writes for). Reads before the set see `nil`; a second `set`
/// is a wiring bug and stops the process (a silently replaced value would split the server's
/// state between two objects).
public final class SetOnce<Value: Sendable>: Sendable {
    private let stored = Mutex<Value?>(nil)

    public init() {}

    /// Stores `value`. Precondition: nothing was stored before.
    public func set(_ value: Value) {
        let fresh = stored.withLock { slot -> Bool in
            guard slot == nil else { return false }
            slot = value
            return true
        }
        precondition(fresh, "SetOnce<\(Value.self)> set twice")
    }

    /// The stored value, nil until `set`.
    public var value: Value? { stored.withLock { $0 } }
}
