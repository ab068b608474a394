import TSDomain

/// A value behind a `Lock`.
final class LockedBox<Value>: @unchecked Sendable {
    // Invariant: `value` is only read or written inside `lock.withLock`.
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
