import Foundation

/// A value known only after the objects that need it are built (the HTTP server, for the
/// `/metrics` handler registered before it exists). Set once; read many times.
final class LateBound<Value: AnyObject & Sendable>: @unchecked Sendable {
    // Invariant: `stored` is only read or written while holding `lock`.
    private let lock = NSLock()
    private var stored: Value?

    func set(_ value: Value) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}
