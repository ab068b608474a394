import Dispatch

/// Signals delivered to a handler instead of their default action (Dispatch signal sources),
/// ready when `install` returns.
///
/// The two systems differ, and this is the one place that knows it:
/// - On Linux, libdispatch installs its own `sigaction` handler when a signal source is
///   registered, which happens on its manager queue some time after `resume()`; until then the
///   default action applies. Setting `SIG_IGN` first (as Darwin needs) would open a window in
///   which the signal is discarded: a `kill` sent right after the server said it was listening
///   was lost, and the process never stopped.
/// - On Darwin the source is a kqueue `EVFILT_SIGNAL` filter, which sees a signal without
///   handling it (kqueue(2)), so the default action must be set to `SIG_IGN`.
/// `install` returns once every source is registered: a signal sent after that reaches `handler`.
public final class SignalWatch: Sendable {
    private let sources: [SendableSource]

    // @unchecked Sendable: set once in `install`, then only cancelled; a Dispatch source is
    // thread-safe.
    private struct SendableSource: @unchecked Sendable { let source: any DispatchSourceSignal }

    private init(_ sources: [SendableSource]) { self.sources = sources }

    /// Watches `signals`; `handler` runs on `queue` for each one received.
    public static func install(_ signals: [Int32], queue: DispatchQueue = .global(),
                               handler: @escaping @Sendable (Int32) -> Void) async -> SignalWatch {
        let (registered, done) = AsyncStream<Void>.makeStream()
        let sources = signals.map { sig -> SendableSource in
            if OperatingSystem.current == .darwin { signal(sig, SIG_IGN) }
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setRegistrationHandler { done.yield() }
            source.setEventHandler { handler(sig) }
            source.resume()
            return SendableSource(source: source)
        }
        var count = 0
        for await _ in registered {
            count += 1
            if count == signals.count { break }
        }
        return SignalWatch(sources)
    }

    /// Stops watching (the default actions are not restored).
    public func cancel() { for s in sources { s.source.cancel() } }
}
