import TSSync

/// A value known only after the objects that need it are built (the HTTP server, for the
/// `/metrics` handler registered before it exists). Set once; read many times.
final class LateBound<Value: AnyObject & Sendable>: Sendable {
    private let stored = LockedValue<Value?>(nil)

    func set(_ value: Value) { stored.withLock { $0 = value } }
    var value: Value? { stored.current }
}
