import Foundation
import TSTestSupport
import XCTest
@testable import TSSockets

/// The C ring wrapper (CSystem's `ts_uring_*` through `SendRing`) against real
/// loopback TCP sockets: many sends in one submission, a full socket completing at once with
/// EAGAIN (the property the event loop relies on to never block), a reset peer, a full ring.
///
/// Each ring lives and dies on a thread of its own (`onOwnThread`): when a ring closes, the
/// kernel interrupts every thread that submitted to it once, which would fail a later test's
/// blocking read (with a timeout) on the test thread with EINTR.
// @unchecked Sendable: a test's body runs on one thread at a time (the test thread waits for it).
final class SendRingTests: XCTestCase, @unchecked Sendable {
    func onOwnThread(_ body: @escaping @Sendable () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedValue<(any Error)?>(nil)
        let thread = Thread {
            do { try body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        thread.start()
        done.wait()
        if let error = failure.current { throw error }
    }

    /// A ring, or a visible skip saying why there is none (macOS; a kernel or seccomp profile
    /// that refuses io_uring, e.g. Docker's default).
    func makeRing(entries: Int) throws -> SendRing {
        var failure: String?
        guard let ring = SendRing(entries: entries, failure: &failure) else {
            throw XCTSkip("io_uring not available here: \(failure ?? "?")")
        }
        return ring
    }

    /// `count` connected pairs: (server end, non-blocking, from TSSockets; client end, blocking).
    func pairs(_ count: Int, clientReceiveBuffer: Int32? = nil) throws -> (listener: Socket, pairs: [(server: Socket, client: Int32)]) {
        let listener = try Socket.makeListener(host: "127.0.0.1", port: 0, backlog: 128)
        let port = try listener.localPort()
        var out: [(Socket, Int32)] = []
        for _ in 0..<count {
            let client = TestSockets.connectLoopback(port: port) { fd in
                if let clientReceiveBuffer { TestSockets.setReceiveBuffer(fd, bytes: clientReceiveBuffer) }
                TestSockets.setReceiveTimeout(fd, seconds: 5)
            }
            XCTAssertGreaterThanOrEqual(client, 0)
            var accepted: Socket?
            try blockUntil(timeout: .seconds(1)) {
                if case .accepted(let s, _) = try listener.accept() { accepted = s }
                return accepted != nil
            }
            out.append((try XCTUnwrap(accepted), client))
        }
        return (listener, out)
    }

    func closeAll(_ listener: Socket, _ pairs: [(server: Socket, client: Int32)]) {
        for p in pairs { p.server.close(); _ = close(p.client) }
        listener.close()
    }

    /// Reads exactly `count` bytes from a blocking client socket (nil on timeout or EOF).
    func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65_536)
        while out.count < count {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, count - out.count), 0) }
            if n <= 0 { return nil }
            out += buf[0..<n]
        }
        return out
    }

    func testManySendsCompleteInOneSubmissionEachWithItsBytes() throws {
        try onOwnThread { [self] in
            let ring = try makeRing(entries: 16)
            XCTAssertEqual(ring.capacity, 16)
            let (listener, pairs) = try pairs(12)
            defer { closeAll(listener, pairs) }
            let payloads: [[UInt8]] = (0..<pairs.count).map { i in Array("message \(i) ".utf8) + [UInt8](repeating: UInt8(65 + i), count: 100 * (i + 1)) }
            // One contiguous staging area, as the event loop uses.
            let staging = UnsafeMutableRawBufferPointer.allocate(byteCount: payloads.reduce(0) { $0 + $1.count }, alignment: 16)
            defer { staging.deallocate() }
            var offset = 0
            for (i, payload) in payloads.enumerated() {
                let slot = UnsafeMutableRawBufferPointer(rebasing: staging[offset..<(offset + payload.count)])
                payload.withUnsafeBytes { slot.copyMemory(from: $0) }
                XCTAssertTrue(ring.queue(fd: pairs[i].server.fd, UnsafeRawBufferPointer(slot), tag: UInt64(1000 + i)))
                offset += payload.count
            }
            XCTAssertEqual(ring.submitAndWait(), Int32(pairs.count), "every send completed during the one submit")
            var results: [UInt64: Int32] = [:]
            while let (tag, result) = ring.nextCompletion() { results[tag] = result }
            XCTAssertEqual(results.count, pairs.count)
            for (i, payload) in payloads.enumerated() {
                XCTAssertEqual(results[UInt64(1000 + i)], Int32(payload.count), "send \(i)")
                XCTAssertEqual(readExactly(pairs[i].client, payload.count), payload, "socket \(i) got its own bytes")
            }
            XCTAssertNil(ring.nextCompletion(), "nothing left to reap")
            // The ring is reusable: a second round on the same slots.
            XCTAssertTrue(ring.queue(fd: pairs[0].server.fd, UnsafeRawBufferPointer(rebasing: staging[0..<5]), tag: 7))
            XCTAssertEqual(ring.submitAndWait(), 1)
            XCTAssertEqual(ring.nextCompletion()?.result, 5)
            XCTAssertEqual(readExactly(pairs[0].client, 5), Array(payloads[0][0..<5]))
        }
    }

    /// The event loop submits with min_complete = n: that only never blocks if a MSG_DONTWAIT
    /// send to a full socket completes at once with EAGAIN (not armed to wait for room). A
    /// partly full one takes what fits (a short send).
    func testAFullSocketCompletesAtOnceWithEAGAINAndAPartlyFullOneWithAShortSend() throws {
        try onOwnThread { [self] in
            let ring = try makeRing(entries: 4)
            let (listener, pairs) = try pairs(2, clientReceiveBuffer: 4096)
            defer { closeAll(listener, pairs) }
            let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
            let big = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * 1024 * 1024, alignment: 16)
            defer { big.deallocate() }
            big.initializeMemory(as: UInt8.self, repeating: 0x61)
            // Fill the first socket with send(2) until EAGAIN, then send through the ring at once. The
            // kernel may grow the send buffer as ACKs arrive between the two (autotuning), so the
            // ring's send can still find room: then fill again (at most 20 rounds).
            var taken = 0
            var sawEAGAIN = false
            for _ in 0..<20 where !sawEAGAIN {
                while case .bytes(let n) = try chunk.withUnsafeBytes({ try pairs[0].server.send($0) }), n > 0 { taken += n }
                XCTAssertTrue(ring.queue(fd: pairs[0].server.fd, UnsafeRawBufferPointer(rebasing: big[0..<100]), tag: 1))
                XCTAssertEqual(ring.submitAndWait(), 1)
                let result = try XCTUnwrap(ring.nextCompletion()).result
                if result == -EAGAIN { sawEAGAIN = true } else { XCTAssertGreaterThan(result, 0); taken += Int(result) }
            }
            XCTAssertTrue(sawEAGAIN, "a full socket completes with EAGAIN")
            // 8 MB to the second (empty) socket: more than its buffers hold, so only part is taken.
            XCTAssertTrue(ring.queue(fd: pairs[1].server.fd, UnsafeRawBufferPointer(big), tag: 2))
            XCTAssertEqual(ring.submitAndWait(), 1)
            let short = try XCTUnwrap(ring.nextCompletion()).result
            XCTAssertGreaterThan(short, 0)
            XCTAssertLessThan(short, Int32(big.count), "a short send, not a wait for room")
            // Each socket carries exactly what was taken, nothing from the send that got EAGAIN.
            XCTAssertEqual(readExactly(pairs[0].client, taken)?.count, taken)
            TestSockets.setReceiveTimeout(pairs[0].client, seconds: 0.2)
            XCTAssertNil(readExactly(pairs[0].client, 1), "no byte more")
            XCTAssertEqual(readExactly(pairs[1].client, Int(short))?.allSatisfy { $0 == 0x61 }, true)
        }
    }

    func testASendToAResetPeerCompletesWithAnError() throws {
        try onOwnThread { [self] in
            let ring = try makeRing(entries: 4)
            let (listener, pairs) = try pairs(1)
            defer { listener.close(); pairs[0].server.close() }
            // SO_LINGER {on, 0}: close(2) sends a reset.
            var linger = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(pairs[0].client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            _ = close(pairs[0].client)
            // Wait for the reset to arrive: it makes the server end readable (with an error).
            var arrived = pollfd(fd: pairs[0].server.fd, events: Int16(POLLIN), revents: 0)
            XCTAssertEqual(poll(&arrived, 1, 5_000), 1, "the reset reached the server end")
            let bytes: [UInt8] = Array("after the reset".utf8)
            var results: [Int32] = []
            try bytes.withUnsafeBytes { raw in
                for round in 0..<2 {  // the first may still be taken before the reset is seen
                    XCTAssertTrue(ring.queue(fd: pairs[0].server.fd, raw, tag: UInt64(round)))
                    XCTAssertEqual(ring.submitAndWait(), 1)
                    results.append(try XCTUnwrap(ring.nextCompletion()).result)
                }
            }
            XCTAssertTrue(results.contains { $0 == -ECONNRESET || $0 == -EPIPE }, "ECONNRESET or EPIPE, never SIGPIPE: \(results)")
        }
    }

    func testAFullRingRefusesOneMoreSend() throws {
        try onOwnThread { [self] in
            let ring = try makeRing(entries: 2)
            let (listener, pairs) = try pairs(1)
            defer { closeAll(listener, pairs) }
            let bytes: [UInt8] = [1, 2, 3]
            bytes.withUnsafeBytes { raw in
                XCTAssertTrue(ring.queue(fd: pairs[0].server.fd, raw, tag: 1))
                XCTAssertTrue(ring.queue(fd: pairs[0].server.fd, raw, tag: 2))
                XCTAssertFalse(ring.queue(fd: pairs[0].server.fd, raw, tag: 3), "capacity reached")
                XCTAssertEqual(ring.submitAndWait(), 2)
            }
            var tags: [UInt64] = []
            while let (tag, result) = ring.nextCompletion() { tags.append(tag); XCTAssertEqual(result, 3) }
            XCTAssertEqual(tags.sorted(), [1, 2])
            XCTAssertEqual(readExactly(pairs[0].client, 6), [1, 2, 3, 1, 2, 3], "in submission order on one socket")
        }
    }

    /// `server.ioUring = off` (or the environment's off) gives loops without a ring; `auto` one
    /// where the kernel allows it.
    func testTheModeChoosesTheRing() async throws {
        let off = try EventLoop(ioUring: .off)
        defer { off.shutdown() }
        XCTAssertFalse(off.usesIORing)
        let name = IORingMode.environmentVariable
        let saved = getenv(name).map { String(cString: $0) }
        defer { if let saved { setenv(name, saved, 1) } else { unsetenv(name) } }
        setenv(name, "off", 1)
        XCTAssertEqual(IORingMode.auto.resolved, .off)
        unsetenv(name)
        XCTAssertEqual(IORingMode.auto.resolved, .auto)
        let probe = LockedValue<(available: Bool, failure: String?)>((false, nil))
        try onOwnThread {
            var failure: String?
            let available = SendRing(entries: 4, failure: &failure) != nil
            probe.withLock { $0 = (available, failure) }
        }
        let (available, failure) = probe.current
        let auto = try EventLoop(ioUring: .auto)
        defer { auto.shutdown() }
        XCTAssertEqual(auto.usesIORing, available, failure ?? "")
        let counters = await auto.sendCounters()
        XCTAssertEqual(counters, SendCounters())
    }
}
