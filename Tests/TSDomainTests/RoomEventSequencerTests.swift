import XCTest
@testable import TSDomain

/// The per-room delivery order behind docs/realtime.md "Order": fixtures of arrivals and the
/// order `next` hands them out in.
final class RoomEventSequencerTests: XCTestCase {
    typealias Sequencer = RoomEventSequencer<String>

    /// Drains `room` at `now` until it is idle or waits for a gap; the items in delivery order.
    private func drain(_ s: inout Sequencer, _ room: String, now: UInt64 = 0) -> (items: [String], last: Sequencer.Step) {
        var out: [String] = []
        while true {
            let step = s.next(room: room, now: now)
            guard case .item(_, let item) = step else { return (out, step) }
            out.append(item)
        }
    }

    func testAppendedItemsLeaveInCallOrderWithOneDrainPerRoom() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        XCTAssertEqual(s.append("a1", room: "a").admission, .startDrain)
        XCTAssertEqual(s.append("a2", room: "a").admission, .queued, "a drain already runs for the room")
        XCTAssertEqual(s.append("b1", room: "b").admission, .startDrain, "rooms drain independently")
        XCTAssertEqual(s.append("a3", room: "a").seq, 3)
        XCTAssertEqual(drain(&s, "a").items, ["a1", "a2", "a3"])
        XCTAssertEqual(s.append("a4", room: "a").admission, .startDrain, "the drain ended at idle: the next item starts one")
        XCTAssertEqual(drain(&s, "a").items, ["a4"])
        XCTAssertEqual(drain(&s, "b").items, ["b1"])
        XCTAssertEqual(s.roomCount, 0, "idle rooms are forgotten")
    }

    func testAnItemQueuedWhileDrainingIsDeliveredByThatDrain() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.append("e1", room: "r")
        guard case .item(_, "e1") = s.next(room: "r", now: 0) else { return XCTFail("e1 first") }
        XCTAssertEqual(s.append("join", room: "r").admission, .queued)
        XCTAssertEqual(s.append("e2", room: "r").admission, .queued)
        XCTAssertEqual(drain(&s, "r").items, ["join", "e2"], "a join sits between the events committed before and after it")
    }

    func testAFullRoomRefusesWithoutTakingANumber() {
        var s = Sequencer(maxPendingPerRoom: 2, gapWaitNanoseconds: 1000)
        _ = s.append("1", room: "r")
        _ = s.append("2", room: "r")
        XCTAssertEqual(s.append("3", room: "r").admission, .full)
        XCTAssertEqual(s.append("x", room: "other").admission, .startDrain, "the bound is per room")
        XCTAssertEqual(drain(&s, "r").items, ["1", "2"])
        XCTAssertEqual(s.append("4", room: "r").seq, 1, "an idle room starts over: the refused item took no number")
    }

    func testNumberedItemsArrivingOutOfOrderLeaveInNumberOrder() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        XCTAssertEqual(s.accept("5", seq: 5, room: "r"), .startDrain)
        XCTAssertEqual(s.accept("7", seq: 7, room: "r"), .queued)
        let first = drain(&s, "r", now: 100)
        XCTAssertEqual(first.items, ["5"])
        guard case .waitGap(let until) = first.last else { return XCTFail("6 is missing: wait for it, got \(first.last)") }
        XCTAssertEqual(until, 1100)
        XCTAssertEqual(s.accept("6", seq: 6, room: "r"), .queued, "the drain still runs while it waits")
        XCTAssertEqual(drain(&s, "r", now: 200).items, ["6", "7"])
        XCTAssertEqual(s.accept("6 again", seq: 6, room: "r"), .duplicate)
        XCTAssertEqual(s.accept("4 late", seq: 4, room: "r"), .duplicate, "older than what was delivered")
        XCTAssertEqual(s.skipped, 0)
    }

    func testAGapIsGivenUpAfterTheWait() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("1", seq: 1, room: "r")
        _ = s.accept("4", seq: 4, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["1"])
        guard case .waitGap = s.next(room: "r", now: 999) else { return XCTFail("still waiting at 999") }
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["4"], "2 and 3 never came (rolled back): given up after the wait")
        XCTAssertEqual(s.skipped, 2)
        XCTAssertEqual(s.accept("3 late", seq: 3, room: "r"), .duplicate, "a number given up stays given up")
        guard case .idle = s.next(room: "r", now: 1000) else { return XCTFail("idle") }
        XCTAssertEqual(s.roomCount, 1, "a numbered room remembers where it is")
        XCTAssertEqual(s.accept("5", seq: 5, room: "r"), .startDrain)
    }

    func testInterleavedCommitsFromManyWritersLeaveInOneOrderPerRoom() {
        // 16 writers' commits in one room, interleaved with two other rooms: each room's items
        // leave exactly in their commit (append) order, whatever the drains' interleaving.
        var s = Sequencer(maxPendingPerRoom: 1000, gapWaitNanoseconds: 1000)
        var expected: [String: [String]] = [:]
        var got: [String: [String]] = [:]
        var rng = SystemRandomNumberGenerator()
        for i in 0..<600 {
            let room = ["r1", "r2", "r3"][Int(rng.next() % 3)]
            let item = "w\(i % 16)-\(i)"
            expected[room, default: []].append(item)
            _ = s.append(item, room: room)
            if rng.next() % 4 == 0, case .item(_, let x) = s.next(room: room, now: 0) { got[room, default: []].append(x) }
        }
        for room in ["r1", "r2", "r3"] { got[room, default: []] += drain(&s, room).items }
        XCTAssertEqual(got, expected)
    }
}
