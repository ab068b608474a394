/// State that belongs to one event loop: readable and writable only on that loop's thread.
///
/// A class whose mutable state is loop-confined used to say so in a comment beside an
/// `@unchecked Sendable`; this box makes the rule a check instead (the idea of SwiftNIO's
/// `NIOLoopBound`). It is `Sendable` whatever `Value` is, because every access checks that it
/// runs on `loop` — in release builds too: the check is one thread-id compare (`pthread_self`
/// against the loop's thread, `EventLoop.inEventLoop`), cheap beside the work done with the value,
/// and a data race it catches would otherwise corrupt memory silently. The value can travel to
/// other threads inside its owner, but only the loop's thread can touch it. Hop first
/// (`loop.execute`/`executeOrRun`) to reach it from elsewhere.
///
/// It is a reference (one box shared by its owner's copies), so an owner that keeps only `let`s of
/// Sendable types and loop-bound boxes can be plainly `Sendable`, without `@unchecked`.
// @unchecked Sendable: `stored` is only read or written on `loop`'s thread (checked on every access, release builds included).
public final class EventLoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread owns the value.
    public let loop: EventLoop
    @usableFromInline var stored: Value

    /// Made anywhere (nothing else can see the value yet); touched only on `loop` afterwards.
    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        self.stored = value
    }

    /// The value; on `loop`'s thread only. Inlinable (as every accessor here): the caller's
    /// module specializes it for its `Value`, so an access is the thread compare and a direct
    /// load or store, not a call through a generic accessor coroutine.
    @inlinable
    public var value: Value {
        get {
            checkOnLoop()
            return stored
        }
        set {
            checkOnLoop()
            stored = newValue
        }
        // In place: `box.value.field = x` does not copy the whole value out and back.
        _modify {
            checkOnLoop()
            yield &stored
        }
    }

    /// Mutates the value in place (no copy of a collection); on `loop`'s thread only.
    @inlinable @inline(__always)
    public func withValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        checkOnLoop()
        return try body(&stored)
    }

    /// The check of every access, kept in release builds: one compare on the fast path; the
    /// failure (message formatting included) is out of line.
    @inlinable @inline(__always)
    func checkOnLoop() {
        if _slowPath(!loop.inEventLoop) { Self.usedOffLoop() }
    }

    @usableFromInline @inline(never)
    static func usedOffLoop() -> Never {
        preconditionFailure("loop-bound state used off its event loop (\(Value.self))")
    }
}
