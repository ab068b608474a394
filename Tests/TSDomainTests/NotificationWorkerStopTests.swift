import Foundation
import Logging
import TSDomain
import TSStorage
import TSSync
import XCTest

/// `NotificationWorker.stop` waits for a drain under way through a continuation (no polling), and
/// its timeout still returns when a delivery hangs.
final class NotificationWorkerStopTests: XCTestCase {
    /// A delivery that parks until the test releases it.
    final class ParkedDelivery: NotificationDelivery, @unchecked Sendable {
        // Invariant: `parked`, `released` and `calls` are only touched while holding `lock`.
        private let lock = Mutex()
        private var parked: [CheckedContinuation<Void, Never>] = []
        private var released = false
        private var calls = 0
        func deliver(_ n: NotificationRecord, deviceTokens: [String]) async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in calls += 1; if released { return true }; parked.append(c); return false }
                if now { c.resume() }
            }
        }
        func release() { let all = lock.withLock { released = true; defer { parked = [] }; return parked }; all.forEach { $0.resume() } }
        var started: Int { lock.withLock { calls } }
    }

    func testStopWaitsForTheDrainAndTimesOutOnAHungDelivery() async throws {
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        defer { db.close() }
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(db)
        let delivery = ParkedDelivery()
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), delivery: delivery, logger: Logger(label: "test"))
        let a = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let b = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let room = try await domain.rooms.create(actor: a.id, input: Input(["memberIds": [.string(b.id)]]))
        _ = try await domain.elements.create(roomId: room.id, actor: a.id, input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                             originSocketId: nil)
        let deadline = Date().addingTimeInterval(10)
        while delivery.started == 0 && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertEqual(delivery.started, 1, "the worker is inside a delivery")

        // The delivery hangs: stop returns by its timeout.
        await domain.notifications.stop(timeoutNanoseconds: 50_000_000)
        // Released, the drain ends and a second stop returns through the continuation.
        let stopper = Task { await domain.notifications.stop(timeoutNanoseconds: 60_000_000_000) }
        delivery.release()
        await stopper.value
        let again = try await domain.notifications.drainBatch()
        XCTAssertEqual(again, 0, "the drain finished and moved the cursor before stop returned")
    }
}
