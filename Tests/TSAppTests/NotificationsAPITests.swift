import Foundation
import TSDomain
import TSJSON
import TSTestSupport
import XCTest

/// A delivery that blocks until the test releases it: proves delivery is off the request path.
final class GatedDelivery: NotificationDelivery, @unchecked Sendable {
    // Invariant: `delivered` and `waiters` are only touched while holding `lock`; `gate` is a semaphore.
    let gate = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var delivered: [NotificationRecord] = []

    func deliver(_ n: NotificationRecord, deviceTokens: [String]) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { self.gate.wait(); c.resume() }
        }
        lock.withLock { delivered.append(n) }
    }

    var count: Int { lock.lock(); defer { lock.unlock() }; return delivered.count }
    var records: [NotificationRecord] { lock.lock(); defer { lock.unlock() }; return delivered }
}

final class NotificationsAPITests: XCTestCase {
    func testNotificationsAreCreatedForTheRightUsersAndDeliveredOffTheRequestPath() async throws {
        let delivery = GatedDelivery()
        let live = try LiveServer(delivery: delivery)
        defer { Task { await live.stop() } }
        let api = APIClient(base: live.base)
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        let dev = try await api.post("/api/devices", ["token": "apns-token-1", "platform": "ios"], token: a.token)
        XCTAssertEqual(dev.status, 201)
        let badDev = try await api.post("/api/devices", ["token": "t", "platform": "windows"], token: a.token)
        XCTAssertEqual(badDev.status, 400)
        let roomId = try await api.post("/api/rooms", ["memberIds": [.string(b.id)]], token: a.token).decode(DataEnvelope<RoomDTO>.self).data.id

        // Alice creates an element: Bob (not Alice) is notified. Delivery is blocked, yet the request returns.
        let created = try await api.post("/api/rooms/\(roomId)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1],
                                         token: a.token)
        XCTAssertEqual(created.status, 201)
        let elementId = try created.decode(DataEnvelope<ElementDTO>.self).data.id
        // Bob hearts Alice's element: Alice is notified. Still answered while delivery is blocked.
        let toggled = try await api.post("/api/rooms/\(roomId)/elements/\(elementId)/reactions/toggle", token: b.token)
        XCTAssertEqual(toggled.status, 200)
        XCTAssertEqual(delivery.count, 0, "nothing delivered while the delivery is blocked")

        let bobs = try await api.get("/api/notifications", token: b.token).decode(DataEnvelope<[NotificationDTO]>.self).data
        XCTAssertEqual(bobs.map(\.type), ["element_created"])
        XCTAssertEqual(bobs.first?.roomId, roomId)
        let alices = try await api.get("/api/notifications", token: a.token).decode(DataEnvelope<[NotificationDTO]>.self).data
        XCTAssertEqual(alices.map(\.type), ["element_reaction"])
        XCTAssertEqual(alices.first?.elementId, elementId)

        // Alice reacting to her own element notifies nobody.
        _ = try await api.post("/api/rooms/\(roomId)/elements/\(elementId)/reactions/toggle", token: a.token)

        for _ in 0..<4 { delivery.gate.signal() }
        await until(timeout: .seconds(5)) { delivery.count >= 2 }
        XCTAssertEqual(Set(delivery.records.map(\.userId)), [a.id, b.id])
        XCTAssertEqual(delivery.count, 2)

        let unreg = try await api.delete("/api/devices/apns-token-1", token: a.token)
        XCTAssertEqual(unreg.status, 200)
        let again = try await api.delete("/api/devices/apns-token-1", token: a.token)
        XCTAssertEqual(again.status, 404)
    }
}
