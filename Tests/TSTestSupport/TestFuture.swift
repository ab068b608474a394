import Foundation

/// A result computed on another thread, for tests that must block on one socket while
/// another makes progress.
// @unchecked Sendable: `value` is only accessed while holding `cond`.
public final class TestFuture<T: Sendable>: @unchecked Sendable {
    private let cond = NSCondition()
    private var value: T?

    public init() {}

    /// Runs `body` on a new thread; `wait()` returns its result.
    public static func run(_ body: @escaping @Sendable () -> T) -> TestFuture<T> {
        let f = TestFuture<T>()
        Thread.detachNewThread { f.set(body()) }
        return f
    }

    public func set(_ v: T) { cond.lock(); value = v; cond.broadcast(); cond.unlock() }

    /// The result, or nil if it has not arrived within `timeout` seconds.
    public func wait(timeout: TimeInterval = 10) -> T? {
        cond.lock(); defer { cond.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while value == nil { if !cond.wait(until: deadline) { break } }
        return value
    }

}

extension TestFuture where T == Bool {
    /// Runs an async `body` on a task and blocks this (test) thread until it finished or
    /// `timeout` seconds passed: the live tests' `tearDown`, which shuts a server down.
    /// Returns whether it finished in time.
    @discardableResult
    public static func awaitTask(timeout: TimeInterval, _ body: @escaping @Sendable () async -> Void) -> Bool {
        let f = TestFuture<Bool>()
        Task { await body(); f.set(true) }
        return f.wait(timeout: timeout) ?? false
    }
}
