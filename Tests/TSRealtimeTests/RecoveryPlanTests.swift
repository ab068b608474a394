import TSDomain
import TSJSON
import TSRedis
import TSSocketIO
import XCTest
@testable import TSRealtime

/// Which events a session of another node missed (docs/realtime-cluster.md, "Connection state
/// recovery across nodes"): the journal of the node it was on, against this node's ring.
final class RecoveryPlanTests: XCTestCase {
    private func event(_ room: String, _ seq: Int64?) -> DomainEvent {
        DomainEvent(kind: .roomCleared(deleted: 0), roomId: room, actorId: "u", originSocketId: nil, seq: seq)
    }

    private func item(_ room: String, _ seq: Int64?, ms: Int64 = 1_000) -> RecoveryRingItem {
        RecoveryRingItem(event: event(room, seq), ms: ms)
    }

    private func entry(_ n: Int64, _ offsets: ClosedRange<UInt64>, _ room: String, _ seq: Int64, join sid: String? = nil, ms: Int64 = 500) -> RecoveryJournalEntry {
        RecoveryJournalEntry(number: n, first: offsets.lowerBound, counter: offsets.upperBound, roomId: room, seq: seq,
                             kind: sid == nil ? .event : .join, sid: sid, ms: ms)
    }

    private func plan(_ journal: [RecoveryJournalEntry], counter: UInt64, ring: [RecoveryRingItem], since: Int64 = 0,
                      file: StaticString = #filePath, line: UInt = #line) -> RecoveryPlan.Plan? {
        switch RecoveryPlan.missed(journal: journal, counter: counter, sid: "me", ring: ring, ringSinceMs: since) {
        case .success(let p): return p
        case .failure(let f):
            XCTFail("unexpected failure: \(f.rawValue)", file: file, line: line)
            return nil
        }
    }

    private func failure(_ journal: [RecoveryJournalEntry], counter: UInt64, ring: [RecoveryRingItem] = [], since: Int64 = 0) -> RecoveryPlan.Failure? {
        if case .failure(let f) = RecoveryPlan.missed(journal: journal, counter: counter, sid: "me", ring: ring, ringSinceMs: since) { return f }
        return nil
    }

    private func names(_ events: [DomainEvent]) -> [String] { events.map { "\($0.roomId)#\($0.seq.map(String.init) ?? "-")" } }

    func testTheEventsAboveEachRoomsLastDeliveredNumberAreMissedInRingOrder() throws {
        // The client's last packet is the first of S#7's: S#7 counts as delivered (one write per socket).
        let journal = [entry(1, 1...2, "R", 1), entry(2, 3...4, "R", 2), entry(3, 5...6, "S", 7), entry(4, 7...8, "R", 3)]
        let ring = [item("R", 1), item("R", 2), item("S", 7), item("R", 3), item("S", 8), item("R", 4)]
        let p = try XCTUnwrap(plan(journal, counter: 5, ring: ring))
        XCTAssertEqual(names(p.missed), ["R#3", "S#8", "R#4"])
        XCTAssertEqual(p.delivered, ["R": 2, "S": 7])
    }

    func testARoomJournalledOnlyAfterTheOffsetStartsAtItsFirstSuchEntry() throws {
        let journal = [entry(1, 1...1, "R", 1), entry(2, 3...3, "T", 5)]
        let ring = [item("T", 4), item("T", 5), item("T", 6)]
        let p = try XCTUnwrap(plan(journal, counter: 2, ring: ring))
        XCTAssertEqual(names(p.missed), ["T#5", "T#6"])
        XCTAssertEqual(p.delivered, ["R": 1])
    }

    func testARoomNeverJournalledIsPlacedByTimeAfterTheJournalsOldestEntry() throws {
        let journal = [entry(1, 1...1, "R", 1, ms: 500)]
        let ring = [item("U", 1, ms: 400), item("U", 2, ms: 600), item("U", nil, ms: 700)]
        let p = try XCTUnwrap(plan(journal, counter: 1, ring: ring))
        XCTAssertEqual(names(p.missed), ["U#2", "U#-"])
    }

    func testTheSessionsOwnJoinIsItsPlaceInTheRoomAndAnotherSocketsIsNot() throws {
        let ring = [item("R", 9), item("R", 10), item("R", 11)]
        let own = try XCTUnwrap(plan([entry(1, 4...4, "R", 10, join: "me")], counter: 4, ring: ring))
        XCTAssertEqual(names(own.missed), ["R#11"])
        // Another socket's join tells nothing of this one: the room is placed by time.
        let other = try XCTUnwrap(plan([entry(1, 4...4, "R", 10, join: "other", ms: 500)], counter: 4, ring: ring.map { item($0.event.roomId, $0.event.seq, ms: 900) }))
        XCTAssertEqual(names(other.missed), ["R#9", "R#10", "R#11"])
    }

    func testWhatCannotBeExactFails() {
        XCTAssertEqual(failure([], counter: 1), .journalEmpty)
        XCTAssertEqual(failure([entry(1, 1...1, "R", 1), entry(3, 2...2, "R", 2)], counter: 2), .journalHole)
        XCTAssertEqual(failure([entry(1, 1...1, "R", 1)], counter: 5), .journalTailLost)
        XCTAssertEqual(failure([entry(1, 1...1, "R", 1), entry(2, 6...6, "S", 1, join: "me")], counter: 5), .joinNotDelivered)
        XCTAssertEqual(failure([entry(1, 1...1, "R", 1, ms: 500)], counter: 1, since: 500), .ringTooShort)
    }

    func testAJournalEntryRoundTripsThroughItsStreamFields() throws {
        let e = entry(7, 3...9, "room-1", 42, join: "sid-1", ms: 1234)
        XCTAssertEqual(RecoveryJournalEntry(fields: Dictionary(uniqueKeysWithValues: e.fields)), e)
        var broken = Dictionary(uniqueKeysWithValues: e.fields)
        broken["c"] = "x"
        XCTAssertNil(RecoveryJournalEntry(fields: broken))
    }

    func testAnXRANGEReplyIsReadAsJournalEntriesAndAMalformedOneIsRefused() throws {
        let e = entry(1, 2...3, "R", 4)
        let fields = RESPValue.array(e.fields.flatMap { [RESPValue.bulkString(Array($0.0.utf8)), .bulkString(Array($0.1.utf8))] })
        let reply = RESPValue.array([.array([.bulkString(Array("1-0".utf8)), fields])])
        XCTAssertEqual(RedisSessionMirror.journal(reply), [e])
        XCTAssertEqual(RedisSessionMirror.journal(.array([])), [])
        XCTAssertNil(RedisSessionMirror.journal(.array([.array([.bulkString(Array("1-0".utf8)), .array([.bulkString(Array("n".utf8))])])])))
    }

    func testTheRingKeepsAtMostItsCountAndAgeAndSaysSinceWhen() {
        var ring = RecoveryRing(maxCount: 2, maxAgeMs: 100, startMs: 10)
        ring.append(event("R", 1), ms: 20)
        ring.append(event("R", 2), ms: 30)
        XCTAssertEqual(ring.sinceMs, 10)
        ring.append(event("R", 3), ms: 40)
        XCTAssertEqual(ring.snapshot.map(\.event.seq), [2, 3])
        XCTAssertEqual(ring.sinceMs, 20)
        ring.append(event("R", 4), ms: 200)
        XCTAssertEqual(ring.snapshot.map(\.event.seq), [4])
        XCTAssertEqual(ring.sinceMs, 40)
    }

    func testASessionRecordRoundTripsThroughJSON() throws {
        let r = SocketIOSessionRecord(sid: "s", pid: "p", namespace: "/", node: "N-x", rooms: ["a", "user:u"], userID: "u")
        XCTAssertEqual(SocketIOSessionRecord(json: try JSONValue.parse(r.json.serialized())), r)
        XCTAssertNil(SocketIOSessionRecord(json: ["sid": "s"]))
    }

    func testTheDrainGateGivesUpWhenAnItemDoesNotFinishInTime() async {
        let gate = DrainGate()
        await gate.enter()
        let closed = await gate.close(timeout: .milliseconds(20))
        XCTAssertFalse(closed, "an item still runs")
        gate.leave()
        let again = await gate.close(timeout: .seconds(5))
        XCTAssertTrue(again)
        let entered = Task { await gate.enter(); gate.leave(); return true }
        gate.open()
        let ran = await entered.value
        XCTAssertTrue(ran)
    }
}
