import Foundation
import TSSockets

extension EventLoop {
    /// Returns once this loop has run `turns` iterations from now. After
    /// `TestSockets.waitUntilDelivered` (the bytes are in the server socket's receive queue),
    /// two turns mean the loop has read them: the event to wait on after a write whose effect is
    /// not visible from outside, e.g. before moving a `ManualClock` on.
    public func waitForTurns(_ turns: Int = 2) {
        for _ in 0..<turns {
            let done = DispatchSemaphore(value: 0)
            execute { done.signal() }
            _ = done.wait(timeout: .now() + 10)
        }
    }
}

extension EventLoopGroup {
    /// `EventLoop.waitForTurns` on every loop of the group.
    public func waitForTurns(_ turns: Int = 2) {
        for loop in loops { loop.waitForTurns(turns) }
    }
}
