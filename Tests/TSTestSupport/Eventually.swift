import Foundation

// Waiting in tests. A test waits for something to happen, never for time to pass: on a
// continuation or semaphore where the code under test signals one, on the injected
// `ManualClock` where it takes a clock, and otherwise on the state it changes, through the two
// functions below. They re-check a condition that another thread or task makes true until it
// holds or a deadline passes; the deadline bounds a test that would otherwise hang, and is never
// what makes it pass. These (and `TestPause`) are the only places in Tests/ that pause a thread.

/// The re-check schedule of `until`/`blockUntil`: the first re-checks come at once (most
/// conditions hold within a few hundred microseconds: one event-loop turn), then the gap doubles
/// up to 20 ms, so a slow machine is not kept busy by a waiting test.
enum RecheckBackoff {
    static let first: UInt64 = 200_000
    static let longest: UInt64 = 20_000_000
    static func next(after gap: UInt64) -> UInt64 { min(gap * 2, longest) }
}

/// Waits until `condition` holds, re-checking it between suspensions; returns whether it held
/// before `timeout`. For async tests: `XCTAssertTrue(await until { server.count == 0 })`.
@discardableResult
public func until(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    var gap = RecheckBackoff.first
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        await Task.yield()
        try? await Task.sleep(nanoseconds: gap)
        gap = RecheckBackoff.next(after: gap)
    }
}

/// `until` for tests that block their own thread (the raw-socket live tests): waits until
/// `condition` holds; returns whether it held before `timeout`.
@discardableResult
public func blockUntil(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    var gap = RecheckBackoff.first
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(useconds_t(gap / 1000))
        gap = RecheckBackoff.next(after: gap)
    }
}

/// The few places where time passing *is* the behaviour under test. Each use says why at its
/// call site; nothing else in Tests/ sleeps.
public enum TestPause {
    /// A sender that spaces its writes out: a client trickling bytes (slowloris), or a producer
    /// whose pace is the test's subject (a fast producer against a slow consumer).
    public static func trickle(_ gap: Duration) {
        usleep(useconds_t(max(0, gap.components.seconds * 1_000_000 + gap.components.attoseconds / 1_000_000_000_000)))
    }

    /// A handler that takes this long to do its work: the request or event in flight while
    /// something else happens (a shutdown, the next event of the same connection) is what the
    /// test is about.
    public static func work(_ duration: Duration) async {
        try? await Task.sleep(for: duration)
    }

    /// Holds still for `duration` where the test asserts that something does *not* happen
    /// within it, or where the state waited for lives in another process that does not expose
    /// it; the call site says which.
    public static func quiet(_ duration: Duration) {
        trickle(duration)
    }
}
