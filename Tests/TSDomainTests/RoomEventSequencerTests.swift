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

    func testANumberRefusedAsFullIsPassedOverWithoutWaitingForTheGap() {
        // A burst past the bound: every other number is refused while the drain keeps the room at
        // its limit. Those events were dropped here, so they leave holes nobody should wait for.
        var s = Sequencer(maxPendingPerRoom: 2, gapWaitNanoseconds: 1000)
        XCTAssertEqual(s.accept("1", seq: 1, room: "r"), .startDrain)
        XCTAssertEqual(s.accept("2", seq: 2, room: "r"), .queued)
        XCTAssertEqual(s.accept("3", seq: 3, room: "r"), .full)
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["1", "2"])
        XCTAssertEqual(s.accept("4", seq: 4, room: "r"), .startDrain)
        XCTAssertEqual(s.accept("5", seq: 5, room: "r"), .queued)
        XCTAssertEqual(s.accept("6", seq: 6, room: "r"), .full)
        XCTAssertEqual(s.accept("7", seq: 7, room: "r"), .full)
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["4", "5"], "3 was refused: no wait at time 0")
        XCTAssertEqual(s.accept("8", seq: 8, room: "r"), .startDrain)
        let rest = drain(&s, "r", now: 0)
        XCTAssertEqual(rest.items, ["8"], "6 and 7 were refused: 8 leaves at once")
        guard case .idle = rest.last else { return XCTFail("nothing is waited for, got \(rest.last)") }
        XCTAssertEqual(s.skipped, 0, "nothing given up after a wait")
        XCTAssertEqual(s.accept("3 again", seq: 3, room: "r"), .duplicate)
    }

    func testNumberedItemsArrivingOutOfOrderLeaveInNumberOrder() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        XCTAssertEqual(s.accept("5", seq: 5, room: "r"), .startDrain)
        XCTAssertEqual(s.accept("7", seq: 7, room: "r"), .queued)
        let first = drain(&s, "r", now: 100)
        XCTAssertEqual(first.items, ["5"])
        guard case .waitGap(let until) = first.last else { return XCTFail("6 is missing: wait for it, got \(first.last)") }
        XCTAssertEqual(until, 1100)
        let sleeper = s.drainID(room: "r")
        XCTAssertEqual(s.accept("6", seq: 6, room: "r"), .startDrain, "the drain sleeps until 1100: a new one delivers 6 now")
        guard case .idle = s.next(room: "r", now: 1100, drain: sleeper) else { return XCTFail("the replaced drain ends when it wakes") }
        XCTAssertEqual(drain(&s, "r", now: 200).items, ["6", "7"])
        XCTAssertNotEqual(s.drainID(room: "r"), sleeper)
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
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["4"], "2 and 3 did not come within the wait: given up")
        XCTAssertEqual(s.skipped, 2)
        guard case .idle = s.next(room: "r", now: 1000) else { return XCTFail("idle") }
        XCTAssertEqual(s.roomCount, 1, "a numbered room remembers where it is")
        XCTAssertEqual(s.accept("5", seq: 5, room: "r"), .startDrain)
    }

    func testAGivenUpNumberThatStillArrivesIsDeliveredLateOnceAndACopyOfADeliveredOneIsDropped() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("1", seq: 1, room: "r")
        _ = s.accept("3", seq: 3, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["1"])
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["3"], "2 given up after the wait")
        _ = s.accept("4", seq: 4, room: "r")
        XCTAssertEqual(s.accept("2 late", seq: 2, room: "r"), .queued, "its node was cut off longer than the wait: still delivered")
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["2 late", "4"], "next: after 3, which has left, before 4, which has not")
        XCTAssertEqual(s.deliveredLate, 1)
        XCTAssertEqual(s.accept("2 again", seq: 2, room: "r"), .duplicate, "delivered once")
        XCTAssertEqual(s.accept("3 again", seq: 3, room: "r"), .duplicate, "a delivered number is a copy")
        XCTAssertEqual(drain(&s, "r", now: 1000).items, [])
    }

    func testGivenUpNumbersAreRememberedUpToTheirBound() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("1", seq: 1, room: "r")
        let far = Int64(Sequencer.maxGivenUpPerRoom) * 3
        _ = s.accept("far", seq: far, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["1"])
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["far"])
        XCTAssertEqual(s.accept("lowest given up", seq: 2, room: "r"), .duplicate, "only the most recent given-up numbers are kept")
        XCTAssertEqual(s.accept("just before", seq: far - 1, room: "r"), .startDrain)
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["just before"])
    }

    func testAFreshRoomStartedByAJoinIsNotHeldItsReadSaysWhereTheNumbersContinue() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000, freshHoldNanoseconds: 1000)
        XCTAssertEqual(s.accept("join after 7", after: 7, room: "r"), .startDrain)
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["join after 7"], "delivered at once")
        _ = s.accept("e8", seq: 8, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 1).items, ["e8"])
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

    // MARK: several nodes: fresh rooms, joins, bounded state

    func testAFreshRoomHoldsItsFirstItemSoThatAnEarlierNumberArrivingLaterIsNotTakenForADuplicate() {
        // Node view: 57 (from a node with a fast link) arrives before 56 (committed first, slow link).
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000, freshHoldNanoseconds: 1000)
        XCTAssertEqual(s.accept("57", seq: 57, room: "r"), .startDrain)
        guard case .waitGap(let until) = s.next(room: "r", now: 10) else { return XCTFail("the first item of a fresh room waits") }
        XCTAssertEqual(until, 1010)
        XCTAssertEqual(s.accept("56", seq: 56, room: "r"), .startDrain, "not a duplicate: the room's start is not known yet (and the sleeping drain is replaced)")
        guard case .waitGap = s.next(room: "r", now: 1009) else { return XCTFail("the hold lasts its whole time") }
        XCTAssertEqual(drain(&s, "r", now: 1010).items, ["56", "57"])
        XCTAssertEqual(s.skipped, 0, "the numbers before the first one seen are not counted as lost")
        XCTAssertEqual(s.accept("55 late", seq: 55, room: "r"), .duplicate, "once started, older numbers are past")
        XCTAssertEqual(s.accept("58", seq: 58, room: "r"), .startDrain)
        XCTAssertEqual(drain(&s, "r", now: 1011).items, ["58"], "only the first item of a fresh room is held")
    }

    func testWithoutAHoldAFreshRoomStartsAtTheFirstNumberItSees() {
        // One node alone: its own commits reach it in commit order, nothing earlier can follow.
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("57", seq: 57, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["57"])
    }

    func testAJoinLeavesAfterTheNumberItsReadIncludesAndBeforeTheNextOne() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("e1", seq: 1, room: "r")
        _ = s.accept("e3", seq: 3, room: "r")
        XCTAssertEqual(s.accept("join after 2", after: 2, room: "r"), .queued)
        XCTAssertEqual(s.accept("another join after 2", after: 2, room: "r"), .queued)
        let first = drain(&s, "r", now: 0)
        XCTAssertEqual(first.items, ["e1"], "the joins' batches hold 2: they wait for it")
        _ = s.accept("e2", seq: 2, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 1).items, ["e2", "join after 2", "another join after 2", "e3"])
        XCTAssertEqual(s.accept("join after 3", after: 3, room: "r"), .startDrain)
        XCTAssertEqual(drain(&s, "r", now: 2).items, ["join after 3"], "after the last delivered number: next")
        XCTAssertEqual(s.placedLate, 0)
        XCTAssertEqual(s.accept("join after 1", after: 1, room: "r"), .startDrain)
        XCTAssertEqual(drain(&s, "r", now: 3).items, ["join after 1"], "behind events already gone: delivered next, and counted")
        XCTAssertEqual(s.placedLate, 1)
    }

    func testAJoinWaitingForALostNumberLeavesAfterTheGapWait() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.accept("e1", seq: 1, room: "r")
        _ = s.accept("join after 2", after: 2, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["e1"])
        XCTAssertEqual(drain(&s, "r", now: 1000).items, ["join after 2"], "2 never came: given up, then the join")
        XCTAssertEqual(s.skipped, 1)
        _ = s.accept("e3", seq: 3, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 1001).items, ["e3"])
    }

    func testUnnumberedItemsOfANumberedRoomLeaveAfterEverythingSeenSoFar() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 1000)
        _ = s.append("local", room: "r")
        _ = s.accept("e5", seq: 5, room: "r")
        _ = s.append("marker", room: "r")
        _ = s.accept("e6", seq: 6, room: "r")
        XCTAssertEqual(drain(&s, "r", now: 0).items, ["local", "e5", "marker", "e6"])
    }

    func testIdleNumberedRoomsAreForgottenAfterTheIdleTimeAndThenStartFresh() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 100, freshHoldNanoseconds: 100, idleForgetNanoseconds: 10_000)
        _ = s.accept("a1", seq: 1, room: "a")
        XCTAssertEqual(drain(&s, "a", now: 0).items, [])
        XCTAssertEqual(drain(&s, "a", now: 100).items, ["a1"])
        _ = s.accept("b1", seq: 1, room: "b")
        _ = s.next(room: "b", now: 9_000)
        XCTAssertEqual(drain(&s, "b", now: 9_100).items, ["b1"])
        XCTAssertEqual(s.roomCount, 2)
        _ = s.accept("c1", seq: 1, room: "c")
        _ = s.next(room: "c", now: 14_100)
        XCTAssertEqual(drain(&s, "c", now: 14_200).items, ["c1"])
        XCTAssertEqual(s.roomCount, 2, "a was idle for the whole idle time: forgotten (rooms are looked at twice per idle time); b was not")
        XCTAssertEqual(s.forgotten, 1)
        XCTAssertEqual(s.accept("a9", seq: 9, room: "a"), .startDrain, "a forgotten room is fresh again")
        guard case .waitGap = s.next(room: "a", now: 14_300) else { return XCTFail("fresh: its first item is held") }
        _ = s.accept("a8", seq: 8, room: "a")
        XCTAssertEqual(drain(&s, "a", now: 14_400).items, ["a8", "a9"])
    }

    func testTheRoomTableIsCappedByForgettingTheLongestIdleRoomsFirst() {
        var s = Sequencer(maxPendingPerRoom: 10, gapWaitNanoseconds: 100, maxRooms: 4)
        for (i, room) in ["r0", "r1", "r2", "r3"].enumerated() {
            _ = s.accept(room, seq: 1, room: room)
            XCTAssertEqual(drain(&s, room, now: UInt64(i)).items, [room])
        }
        XCTAssertEqual(s.roomCount, 4)
        _ = s.accept("busy", seq: 1, room: "busy")
        XCTAssertEqual(s.roomCount, 3, "full: the two longest idle (r0, r1) forgotten for the new room")
        XCTAssertEqual(s.accept("r2 again", seq: 1, room: "r2"), .duplicate, "r2 was kept: it remembers its number")
        XCTAssertEqual(s.accept("r0 again", seq: 1, room: "r0"), .startDrain, "r0 was forgotten: it starts fresh")
        XCTAssertEqual(s.forgotten, 2)
        XCTAssertEqual(drain(&s, "busy", now: 10).items, ["busy"])
    }
}
