import XCTest
import TSSockets

/// The outbound bound as pure bookkeeping: it bounds a slow reader's backlog,
/// never the size of one answer, and its deadlines are total.
final class ConnectionOutboundQueueTests: XCTestCase {
    func bytes(_ n: Int, _ v: UInt8 = 1) -> [UInt8] { [UInt8](repeating: v, count: n) }

    func testOneMessageOfAnySizeIsAdmittedAndTheBacklogIsBounded() {
        var q = ConnectionOutboundQueue(maxBacklogBytes: 100)
        XCTAssertTrue(q.append(bytes(10_000)), "a message larger than the bound, the queue otherwise drained")
        XCTAssertEqual(q.backlogBytes, 0)
        XCTAssertTrue(q.append(bytes(60)))
        XCTAssertTrue(q.append(bytes(40)))
        XCTAssertEqual(q.backlogBytes, 100)
        XCTAssertTrue(q.append(bytes(1)), "the one message allowed beyond the bound")
        XCTAssertEqual(q.exemptBytes, 1)
        XCTAssertFalse(q.append(bytes(1)), "a reader that lets the backlog pass the bound is a slow consumer")
        XCTAssertEqual(q.pendingBytes, 10_101, "a refused write queues nothing")
    }

    func testALargeMessageBehindTheHeadIsExemptOnce() {
        var q = ConnectionOutboundQueue(maxBacklogBytes: 100)
        XCTAssertTrue(q.append(bytes(10)))            // e.g. a ping frame being sent
        XCTAssertTrue(q.append(bytes(5_000)))         // the room's elements:batch behind it: exempt
        XCTAssertEqual(q.exemptBytes, 5_000)
        XCTAssertTrue(q.append(bytes(50)))            // a broadcast right after: backlog 50
        XCTAssertFalse(q.append(bytes(6_000)), "a second large message is backlog")
        // Sending the head makes the exempt message the head; the slot frees.
        _ = q.consume(10, now: 0)
        XCTAssertEqual(q.exemptBytes, 0)
        XCTAssertEqual(q.headRemaining, 5_000)
        XCTAssertEqual(q.backlogBytes, 50)
        XCTAssertTrue(q.append(bytes(6_000)), "now it may wait behind the head")
    }

    func testAReaderThatKeepsReadingIsNeverRefused() {
        // Answers of 10x the bound, each followed by small messages, drained as fast as they come.
        var q = ConnectionOutboundQueue(maxBacklogBytes: 1_000)
        var refused = 0
        for round in 0..<50 {
            if !q.append(bytes(10_000)) { refused += 1 }
            for _ in 0..<5 where !q.append(bytes(100)) { refused += 1 }
            // The client reads about one answer's worth per round.
            _ = q.consume(min(q.pendingBytes, 10_500), now: UInt64(round))
        }
        XCTAssertEqual(refused, 0)
    }

    func testCompletionCallbacksAndGatherAcrossParts() {
        var q = ConnectionOutboundQueue(maxBacklogBytes: 1 << 20)
        var done: [Int] = []
        XCTAssertTrue(q.append([1, 2], [3, 4, 5], onDone: { if $0 == .delivered { done.append(1) } }))
        XCTAssertTrue(q.append([6], onDone: { if $0 == .delivered { done.append(2) } }))
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
        defer { scratch.deallocate() }
        XCTAssertEqual(q.gather(into: scratch), 4)
        XCTAssertEqual(Array(scratch), [1, 2, 3, 4])
        for cb in q.consume(3, now: 0) { cb(.delivered) }
        XCTAssertEqual(done, [])
        XCTAssertEqual(q.headChunkCount, 2, "the head's second part has 2 unsent bytes")
        let full = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { full.deallocate() }
        XCTAssertEqual(q.gather(into: full), 3)
        XCTAssertEqual(Array(full.prefix(3)), [4, 5, 6])
        for cb in q.consume(3, now: 0) { cb(.delivered) }
        XCTAssertEqual(done, [1, 2])
        XCTAssertTrue(q.isEmpty)

        XCTAssertTrue(q.append(bytes(10), onDone: { outcome in
            XCTAssertEqual(outcome, .dropped(reason: .slowConsumer, sentBytes: 4, totalBytes: 10))
            done.append(3)
        }))
        _ = q.consume(4, now: 0)
        for (cb, outcome) in q.dropAll(reason: .slowConsumer) { cb(outcome) }
        XCTAssertEqual(done, [1, 2, 3])
    }

    func testStallDeadlineAndTotalRateDeadline() {
        let s: UInt64 = 1_000_000_000
        var q = ConnectionOutboundQueue(maxBacklogBytes: 1 << 20, stallTimeout: 10 * s, minBytesPerSecond: 1_000)
        XCTAssertTrue(q.append(bytes(20_000)))
        XCTAssertNil(q.nextDeadline, "no deadline until the kernel refuses bytes")
        q.blocked(now: 100 * s)
        // Total deadline: 10 s + 20,000 bytes / 1,000 B/s = 30 s; stall: 10 s without progress.
        XCTAssertEqual(q.nextDeadline, 110 * s)
        XCTAssertNil(q.expiry(now: 109 * s))
        XCTAssertEqual(q.expiry(now: 110 * s), .stalled, "a client that stops reading")
        // A trickling reader: one byte every 9 s keeps the stall clock from firing...
        var t: UInt64 = 100 * s
        while t + 9 * s < 130 * s {
            t += 9 * s
            _ = q.consume(1, now: t)
            XCTAssertNotEqual(q.expiry(now: t), .stalled)
        }
        // ...but not the total deadline, which trickled reads do not extend.
        XCTAssertEqual(q.expiry(now: 130 * s), .tooSlow)
        // Writes while blocked extend the total deadline by their own size / rate.
        var r = ConnectionOutboundQueue(maxBacklogBytes: 1 << 20, stallTimeout: 10 * s, minBytesPerSecond: 1_000)
        XCTAssertTrue(r.append(bytes(1_000)))
        r.blocked(now: 0)
        XCTAssertTrue(r.append(bytes(5_000)))
        _ = r.consume(1, now: 9 * s)
        _ = r.consume(1, now: 15 * s)
        XCTAssertNil(r.expiry(now: 15 * s), "deadline 10 + 6 = 16 s")
        XCTAssertEqual(r.expiry(now: 16 * s), .tooSlow)
        // Draining ends every deadline.
        _ = r.consume(r.pendingBytes, now: 16 * s)
        XCTAssertNil(r.nextDeadline)
        XCTAssertNil(r.expiry(now: 1_000 * s))
    }
}

/// The per-address cap's bookkeeping; the live refusal is in HTTPTransportLimitsTests.
final class ConnectionAddressCapTests: XCTestCase {
    func testCountsPerAddressWithoutThePort() {
        XCTAssertEqual(ConnectionAddressCap.host(of: "127.0.0.1:5555"), "127.0.0.1")
        XCTAssertEqual(ConnectionAddressCap.host(of: "[::1]:5555"), "::1")
        XCTAssertEqual(ConnectionAddressCap.host(of: "[2001:db8::7]:80"), "2001:db8::7")
        let cap = ConnectionAddressCap(maxPerAddress: 2)
        XCTAssertTrue(cap.acquire("10.0.0.1:1"))
        XCTAssertTrue(cap.acquire("10.0.0.1:2"))
        XCTAssertFalse(cap.acquire("10.0.0.1:3"), "a third from the same address, another port")
        XCTAssertTrue(cap.acquire("10.0.0.2:1"), "another address is served")
        cap.release("10.0.0.1:1")
        XCTAssertEqual(cap.count(host: "10.0.0.1"), 1)
        XCTAssertTrue(cap.acquire("10.0.0.1:4"))
        for port in [2, 4] { cap.release("10.0.0.1:\(port)") }
        cap.release("10.0.0.2:1")
        XCTAssertEqual(cap.count(host: "10.0.0.1"), 0)
        XCTAssertEqual(cap.count(host: "10.0.0.2"), 0, "no entry is kept for an address without connections")
        XCTAssertTrue(ConnectionAddressCap(maxPerAddress: 0).acquire("10.0.0.1:1"), "0 turns the cap off")
    }
}
