@_exported import Synchronization

// The lock of every layer is the standard library's `Mutex` (module `Synchronization`, SE-0433):
// a value-protecting lock stored inline in its owner, with no allocation of its own.
// `Synchronization` is re-exported so every module that imports TSSync sees `Mutex` and `Atomic`.

extension Mutex where Value == Void {
    /// A mutex that guards state kept outside it (a class's stored properties documented as
    /// "only under `lock`"), for owners whose state is not one value.
    public init() { self.init(()) }

    /// `withLock` for a mutex that guards state outside it: the body takes no argument.
    @inline(__always)
    public borrowing func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try withLock { (_: inout Void) throws(E) -> sending T in try body() }
    }
}

/// A value behind a `Mutex`, with reference semantics. `Mutex` is non-copyable, so it can be
/// neither captured by an escaping closure nor shared between two owners; this class is the
/// shared, capturable form (a result slot filled on another thread, a counter several objects
/// bump). Keep a plain `Mutex` in a class's stored property wherever one owner suffices.
///
/// `Sendable` only when `Value` is, as `Mutex` is meant to be used: a value that is not
/// `Sendable` (a class without its own synchronisation) could otherwise leave the lock through
/// `withLock`'s result or `current` and be used from two threads at once.
public final class LockedValue<Value> {
    @usableFromInline let mutex: Mutex<UnsafeTransfer<Value>>

    public init(_ value: Value) { mutex = Mutex(UnsafeTransfer(value)) }

    /// Inlinable, so a caller in another module gets it specialised for its `Value` and `T`:
    /// called through the generic entry point, every call looked up the metadata of
    /// `UnsafeTransfer<Value>`, `UnsafeTransfer<T>` and the `Mutex` at run time (≈ 30,000
    /// instructions per REST toggle, bench/RESULTS.md "Toggle: statements, generic locks and
    /// pages per toggle").
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try mutex.withLock { (box: inout UnsafeTransfer<Value>) throws(E) -> sending T in
            let result = try body(&box.value)
            return UnsafeTransfer(result).value
        }
    }

    /// A copy of the current value.
    @inlinable
    public var current: Value { withLock { $0 } }
}

extension LockedValue: Sendable where Value: Sendable {}

/// Carries a value across a `sending` boundary that region analysis cannot see through: the
/// value is only ever touched under the owning mutex, which is the guarantee `sending` asks for.
@usableFromInline
struct UnsafeTransfer<Value>: @unchecked Sendable {
    @usableFromInline var value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}
