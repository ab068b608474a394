import XCTest
@testable import TSSockets

/// Every backend this build can run (epoll and poll on Linux; kqueue and poll on Darwin) against
/// the `Poller` contract: level-triggered readiness, interest changes, removal, the internal
/// wake-up, and (through `EventLoop`) cross-thread tasks and timers.
final class PollerTests: XCTestCase {
    /// A non-blocking pipe; both ends closed by `close()`.
    private struct Pipe {
        let read: Int32
        let write: Int32
        init() throws {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw SocketError.current("pipe") }
            read = ends[0]
            write = ends[1]
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
            _ = fcntl(write, F_SETFL, fcntl(write, F_GETFL) | O_NONBLOCK)
        }
        func put(_ byte: UInt8 = 1) { var b = byte; _ = Platform.write(write, &b, 1) }
        func take() { var b: UInt8 = 0; _ = Platform.read(read, &b, 1) }
        func close() { _ = Platform.close(read); _ = Platform.close(write) }
    }

    private func wait(_ poller: any Poller, timeout: Int32 = 0, capacity: Int = 64) throws -> [PollerEvent] {
        let buffer = UnsafeMutableBufferPointer<PollerEvent>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let n = try poller.wait(timeoutMilliseconds: timeout, into: buffer)
        return Array(buffer[0..<n])
    }

    private var kinds: [PollerKind] { Platform.availablePollers }

    func testEveryPlatformBackendIsTested() {
        XCTAssertTrue(kinds.contains(.poll), "poll(2) is the portable backend and must always be available")
        XCTAssertTrue(kinds.contains(Platform.defaultPoller))
        XCTAssertGreaterThanOrEqual(kinds.count, 2)
    }

    func testReadinessIsLevelTriggeredAndFollowsInterest() throws {
        for kind in kinds {
            let poller = try Platform.makePoller(kind)
            defer { poller.close() }
            XCTAssertEqual(poller.kind, kind)
            let p = try Pipe()
            defer { p.close() }
            try poller.add(fd: p.read, token: 7, interest: .readable)
            XCTAssertEqual(try wait(poller).count, 0, "\(kind): nothing to read yet")

            p.put()
            var events = try wait(poller, timeout: 1000)
            XCTAssertEqual(events.map(\.token), [7], "\(kind)")
            XCTAssertTrue(events.first?.events.contains(.readable) ?? false, "\(kind)")
            // Level-triggered: still unread, so reported again.
            events = try wait(poller)
            XCTAssertEqual(events.map(\.token), [7], "\(kind): level-triggered")

            // No interest: not reported although readable.
            try poller.modify(fd: p.read, token: 7, interest: [])
            XCTAssertEqual(try wait(poller).count, 0, "\(kind): interest cleared")
            try poller.modify(fd: p.read, token: 8, interest: .readable)
            XCTAssertEqual(try wait(poller).map(\.token), [8], "\(kind): interest restored with a new token")

            p.take()
            XCTAssertEqual(try wait(poller).count, 0, "\(kind): drained")

            poller.remove(fd: p.read, token: 8)
            p.put()
            XCTAssertEqual(try wait(poller).count, 0, "\(kind): removed")
        }
    }

    func testWritableAndHangup() throws {
        for kind in kinds {
            let poller = try Platform.makePoller(kind)
            defer { poller.close() }
            var ends: [Int32] = [-1, -1]
            XCTAssertEqual(pipe(&ends), 0)
            try poller.add(fd: ends[1], token: 1, interest: .writable)
            let w = try wait(poller, timeout: 1000)
            XCTAssertEqual(w.map(\.token), [1], "\(kind)")
            XCTAssertTrue(w.first?.events.contains(.writable) ?? false, "\(kind)")
            poller.remove(fd: ends[1], token: 1)

            try poller.add(fd: ends[0], token: 2, interest: .readable)
            _ = Platform.close(ends[1])  // the writer goes away: EOF / hang-up on the read end
            let r = try wait(poller, timeout: 1000)
            XCTAssertEqual(r.map(\.token), [2], "\(kind)")
            let ev = r.first?.events ?? []
            XCTAssertFalse(ev.isDisjoint(with: [.readable, .hangup]), "\(kind): EOF is reported, got \(ev)")
            poller.remove(fd: ends[0], token: 2)
            _ = Platform.close(ends[0])
        }
    }

    func testWakeUpIsInternalAndUnblocksWait() throws {
        for kind in kinds {
            let poller = try Platform.makePoller(kind)
            defer { poller.close() }
            // Before the wait: the next wait returns at once, reporting nothing.
            poller.wakeUp()
            poller.wakeUp()
            XCTAssertEqual(try wait(poller, timeout: -1).count, 0, "\(kind)")
            // From another thread while (or before) the loop blocks without a timeout.
            let box = PollerBox(poller)
            let waker = try SpawnedThread.spawn(name: "ts-test-waker") { box.poller.wakeUp() }
            XCTAssertEqual(try wait(poller, timeout: -1).count, 0, "\(kind)")
            waker.join()
            // The wake-up was consumed: a zero-timeout wait reports nothing and does not spin.
            XCTAssertEqual(try wait(poller, timeout: 0).count, 0, "\(kind)")
        }
    }

    func testMoreReadyThanRoomIsReportedAcrossWaits() throws {
        for kind in kinds {
            let poller = try Platform.makePoller(kind)
            defer { poller.close() }
            var pipes: [Pipe] = []
            defer { pipes.forEach { $0.close() } }
            for i in 0..<5 {
                let p = try Pipe()
                pipes.append(p)
                try poller.add(fd: p.read, token: UInt64(100 + i), interest: .readable)
                p.put()
            }
            var seen = Set<UInt64>()
            for _ in 0..<3 {
                let events = try wait(poller, timeout: 1000, capacity: 2)
                XCTAssertLessThanOrEqual(events.count, 2, "\(kind)")
                seen.formUnion(events.map(\.token))
            }
            XCTAssertEqual(seen, Set((100..<105).map(UInt64.init)), "\(kind): every ready descriptor is reported within three waits")
        }
    }

    func testEventLoopRunsTasksAndTimersOnEachBackend() throws {
        for kind in kinds {
            let clock = ManualClock()
            let loop = try EventLoop(clock: clock, poller: kind)
            defer { loop.shutdown() }
            XCTAssertEqual(loop.pollerKind, kind)

            let ran = expectation(description: "\(kind): execute from another thread")
            loop.execute {
                XCTAssertTrue(loop.inEventLoop)
                ran.fulfill()
            }
            wait(for: [ran], timeout: 10)

            let fired = expectation(description: "\(kind): timer")
            let order = LockedValue<[Int]>([])
            loop.scheduleTask(in: 2_000_000_000) { order.withLock { $0.append(2) }; fired.fulfill() }
            loop.scheduleTask(in: 1_000_000_000) { order.withLock { $0.append(1) } }
            let cancelled = loop.scheduleTask(in: 1_500_000_000) { order.withLock { $0.append(99) } }
            cancelled.cancel()
            // Nothing is due until the clock moves; the loop blocks in its poller meanwhile.
            let probe = expectation(description: "\(kind): probe")
            loop.execute { probe.fulfill() }
            wait(for: [probe], timeout: 10)
            XCTAssertEqual(order.current, [], "\(kind): no timer before its deadline")
            clock.advance(by: 2_000_000_000)
            loop.execute {}  // wake the loop so it re-reads the clock
            wait(for: [fired], timeout: 10)
            XCTAssertEqual(order.current, [1, 2], "\(kind)")
        }
    }

    /// scripts/test runs the live tests a second time with TOUCHSYNC_SERVER_POLLER=poll: this
    /// proves that run really used the named backend for every default loop.
    func testDefaultLoopsUseTheBackendTheEnvironmentNames() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let group = try EventLoopGroup(count: 1)
        defer { group.shutdown() }
        if let raw = getenv(PollerKind.environmentVariable).map({ String(cString: $0) }), let kind = PollerKind(rawValue: raw), kind != .auto {
            XCTAssertEqual(loop.pollerKind, kind)
            XCTAssertEqual(group.loops[0].pollerKind, kind)
        } else {
            XCTAssertEqual(loop.pollerKind, Platform.defaultPoller)
            XCTAssertEqual(group.loops[0].pollerKind, Platform.defaultPoller)
        }
    }

    func testAutoHonoursTheEnvironment() {
        let name = PollerKind.environmentVariable
        let saved = getenv(name).map { String(cString: $0) }
        defer { if let saved { setenv(name, saved, 1) } else { unsetenv(name) } }
        unsetenv(name)
        XCTAssertEqual(PollerKind.auto.resolved, Platform.defaultPoller)
        setenv(name, "poll", 1)
        XCTAssertEqual(PollerKind.auto.resolved, .poll)
        XCTAssertEqual(PollerKind.epoll.resolved, .epoll, "an explicit choice is not overridden")
        setenv(name, "nonsense", 1)
        XCTAssertEqual(PollerKind.auto.resolved, Platform.defaultPoller)
        for kind in PollerKind.allCases where !kind.isAvailable {
            XCTAssertThrowsError(try Platform.makePoller(kind)) { error in
                XCTAssertTrue("\(error)".contains("not available"), "\(error)")
            }
        }
    }
}

// @unchecked Sendable: only `wakeUp()`, which the Poller contract makes thread-safe, is called
// through it from another thread.
private final class PollerBox: @unchecked Sendable {
    let poller: any Poller
    init(_ poller: any Poller) { self.poller = poller }
}
