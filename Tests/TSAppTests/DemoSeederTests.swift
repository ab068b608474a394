import Foundation
import TSApp
import TSJSON
import XCTest

/// The demo data of `serve --demo`: 3 users with known passwords, 2 rooms with
/// members, 20+ elements covering every type, reactions, messages with unread ones, 30 posts with
/// likes and saves. Checked in the database and through the API as the iOS app would see it.
final class DemoSeederTests: XCTestCase {
    func testDemoDataPopulatesEveryScreen() async throws {
        let live = try LiveServer(overrides: ["demo": true])
        let api = APIClient(base: live.base)
        let seeded = try await DemoSeeder.seedIfEmpty(live.server.domain)
        XCTAssertTrue(seeded)

        func count(_ sql: String) throws -> Int64 { try live.server.db.readSync { c in try c.scalarInt(sql) } ?? -1 }
        XCTAssertEqual(try count("SELECT COUNT(*) FROM users"), 3)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM rooms"), 2)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM rooms r WHERE (SELECT COUNT(*) FROM room_members m WHERE m.room_id = r.id) >= 2"), 2,
                       "both rooms have members besides their creator")
        XCTAssertGreaterThanOrEqual(try count("SELECT COUNT(*) FROM elements"), 20)
        XCTAssertEqual(try count("SELECT COUNT(DISTINCT type) FROM elements"), 6, "every element type")
        XCTAssertGreaterThan(try count("SELECT COUNT(*) FROM reactions"), 0)
        XCTAssertGreaterThan(try count("SELECT COUNT(*) FROM messages"), 0)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM posts"), 30)
        XCTAssertGreaterThan(try count("SELECT COUNT(*) FROM post_interactions WHERE liked_at IS NOT NULL"), 0)
        XCTAssertGreaterThan(try count("SELECT COUNT(*) FROM post_interactions WHERE saved_at IS NOT NULL"), 0)
        // Passwords are stored only as a salted PBKDF2 hash whose cost is the setting
        // `auth.passwordIterations` (LiveServer sets 1000).
        let hashes = try live.server.db.readSync { c in try c.rows("SELECT password_hash FROM users") { $0.string(0) } }
        XCTAssertEqual(hashes.count, 3)
        for (hash, user) in zip(hashes, DemoSeeder.users) {
            XCTAssertTrue(hash.hasPrefix("pbkdf2-sha256$1000$"), hash)
            XCTAssertFalse(hashes.contains { $0.contains(user.password) })
        }
        XCTAssertEqual(Set(hashes.map { $0.split(separator: "$").dropFirst(2).first }).count, 3, "each hash has its own salt")

        // Each demo user logs in with the documented password and sees a populated app.
        var unreadMessages = 0
        var reactedElements = 0
        for user in DemoSeeder.users {
            let login = try await api.post("/api/auth/login", ["username": .string(user.username), "password": .string(user.password)])
            XCTAssertEqual(login.status, 200, user.username)
            let token = try login.decode(DataEnvelope<SessionDTO>.self).data.token
            let rooms = try await api.get("/api/rooms/my-rooms", token: token).decode(DataEnvelope<[RoomDTO]>.self).data
            XCTAssertFalse(rooms.isEmpty, "\(user.username) is in a room")
            unreadMessages += rooms.map(\.badges.messages).reduce(0, +)
            for room in rooms {
                let detail = try await api.get("/api/rooms/\(room.id)", token: token).decode(DataEnvelope<RoomDetailDTO>.self).data
                XCTAssertGreaterThanOrEqual(detail.members.count, 2)
                XCTAssertEqual(detail.elements.count, room.elementCount)
                reactedElements += detail.elements.filter { $0.reactions != nil }.count
            }
            let posts = try live.server.db.readSync { c in try c.rows("SELECT id FROM posts") { $0.string(0) } }
            let state = try await api.post("/api/mobile/posts/interaction-state", ["postIds": .array(posts.map(JSONValue.string))], token: token)
                .decode(InteractionStateResponse.self)
            XCTAssertEqual(state.data?.totalPosts, 30)
            XCTAssertGreaterThan(state.data?.totalLiked ?? 0, 0, "\(user.username) has liked posts")
            XCTAssertGreaterThan(state.data?.interactions.map(\.likeCount).reduce(0, +) ?? 0, 0)
            XCTAssertGreaterThan(state.data?.interactions.map(\.saveCount).reduce(0, +) ?? 0, 0)
        }
        XCTAssertGreaterThan(unreadMessages, 0, "some messages are unread")
        XCTAssertGreaterThan(reactedElements, 0, "some elements show reactions")

        let seededAgain = try await DemoSeeder.seedIfEmpty(live.server.domain)
        XCTAssertFalse(seededAgain, "a second start does not seed again")
        XCTAssertEqual(try count("SELECT COUNT(*) FROM users"), 3)
        await live.stop()
    }
}
