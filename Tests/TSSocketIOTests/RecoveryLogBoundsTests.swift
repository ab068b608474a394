import TSJSON
import XCTest
@testable import TSSocketIO

/// The kept sessions of connection state recovery, as a pure value: bounded per user, in total and
/// by age, oldest first, in amortized constant time per disconnect.
final class RecoveryLogBoundsTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    func session(_ n: Int, user: String?, at: UInt64) -> SocketIORecoveryLog.Session {
        SocketIORecoveryLog.Session(sid: "s\(n)", pid: "p\(n)", rooms: ["s\(n)"], userID: user, data: .null, disconnectedAt: at)
    }

    func testOneUserInALoopKeepsItsAllowanceAndOthersKeepTheirs() {
        var log = SocketIORecoveryLog(maxDisconnectionNanoseconds: 120 * second, maxPackets: 10, maxBytes: 1 << 20,
                                      maxSessionsPerUser: 4, maxSessions: 100)
        for n in 0..<72_000 { log.persist(session(n, user: "looper", at: UInt64(n) * 400_000)) }  // 2,500 a second
        XCTAssertEqual(log.sessionCount, 4)
        XCTAssertEqual(log.evictedPerUser, 71_996)
        XCTAssertEqual(log.takeEvicted().count, 71_996, "each dropped pid is handed over once (the mirror forgets it)")
        XCTAssertEqual(log.takeEvicted().count, 0)
        XCTAssertLessThanOrEqual(log.sessionOrderEntries, 2 * 4 + 1024 + 1, "the keeping order does not grow with the loop")
        log.persist(session(-1, user: "alice", at: 72_000 * 400_000))
        XCTAssertEqual(log.sessionCount, 5, "another user's session is kept beside the looper's")
    }

    func testTheTotalBoundDropsTheOldestOfAnyUser() {
        var log = SocketIORecoveryLog(maxDisconnectionNanoseconds: 120 * second, maxPackets: 10, maxBytes: 1 << 20,
                                      maxSessionsPerUser: 0, maxSessions: 3)
        for n in 0..<5 { log.persist(session(n, user: "u\(n)", at: UInt64(n))) }
        XCTAssertEqual(log.sessionCount, 3)
        XCTAssertEqual(log.evictedTotal, 2)
        XCTAssertEqual(log.takeEvicted(), ["p0", "p1"])
    }

    func testSessionsPastTheWindowGoWithoutAnyEventOrRestore() {
        var log = SocketIORecoveryLog(maxDisconnectionNanoseconds: 10 * second, maxPackets: 10, maxBytes: 1 << 20,
                                      maxSessionsPerUser: 0, maxSessions: 0)
        for n in 0..<1_000 { log.persist(session(n, user: "u\(n)", at: UInt64(n) * second / 100)) }  // 10 s of disconnects
        XCTAssertEqual(log.sessionCount, 1_000)
        log.persist(session(1_000, user: "late", at: 15 * second))
        XCTAssertEqual(log.sessionCount, 501, "those older than the window went when the next one was kept")
    }

    func testRestoredSessionsDoNotGrowTheKeepingOrder() {
        var log = SocketIORecoveryLog(maxDisconnectionNanoseconds: 120 * second, maxPackets: 10, maxBytes: 1 << 20,
                                      maxSessionsPerUser: 32, maxSessions: 10_000)
        let offset = log.makeOffset()
        log.append(offset: offset, target: .sockets([]), packets: [], now: 0)
        for n in 0..<50_000 {
            log.persist(session(n, user: "u", at: UInt64(n)))
            XCTAssertNotNil(log.restore(pid: "p\(n)", offset: offset, userID: "u", now: UInt64(n)))
        }
        XCTAssertEqual(log.sessionCount, 0)
        XCTAssertLessThanOrEqual(log.sessionOrderEntries, 1024 + 1)
    }
}
