#if os(Linux)
import Synchronization
#endif

/// A Boolean that any thread may read and write without a lock: one writer publishes a change
/// (release), readers elsewhere see it (acquire). Stored inline in its owner (no allocation) on
/// Linux, where it is the standard library's `Atomic<Bool>`; on Darwin, whose `Atomic` needs
/// macOS 15 (the package supports 14), a `LockedValue`. Non-copyable: keep it as a `let` of a class.
public struct AtomicFlag: ~Copyable, Sendable {
    #if os(Linux)
    private let value: Atomic<Bool>
    public init(_ initial: Bool) { value = Atomic(initial) }
    public var current: Bool { value.load(ordering: .acquiring) }
    public func set(_ newValue: Bool) { value.store(newValue, ordering: .releasing) }
    #else
    private let value: LockedValue<Bool>
    public init(_ initial: Bool) { value = LockedValue(initial) }
    public var current: Bool { value.current }
    public func set(_ newValue: Bool) { value.withLock { $0 = newValue } }
    #endif
}
