import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// The schema's foreign keys (enforced on every connection): each reference
/// has the `ON DELETE` that Migrations/0001 declares, and SQLite enforces them on the server's
/// connections. There is no delete-user or delete-room route, so this works at the storage level.
final class ForeignKeyTests: XCTestCase {
    var db: Database!
    var domain: TouchSyncDomain!
    var users: [PublicUser] = []
    var rooms: [Room] = []

    override func setUp() async throws {
        (db, domain) = try DomainFixture.make()
        users = []
        for name in ["alice", "bob", "carol"] {
            users.append(try await domain.auth.createUser(username: name, passwordHash: await domain.auth.hashPassword("password-\(name)"),
                                                          firstName: nil, avatarUrl: nil))
        }
        let (a, b, c) = (users[0].id, users[1].id, users[2].id)
        rooms = [
            try await domain.rooms.create(actor: a, input: Input(["memberIds": [.string(b), .string(c)]])),
            try await domain.rooms.create(actor: b, input: Input(["memberIds": [.string(a), .string(c)]])),
        ]
        _ = try await domain.rooms.rename(roomId: rooms[1].id, actor: c, input: Input(["name": "named by carol"]), originSocketId: nil)
        for room in rooms {
            var made: [String] = []
            for u in users {
                made.append(try await domain.elements.create(roomId: room.id, actor: u.id, input: Input(["type": "note", "positionX": 1, "positionY": 2,
                                                                                                          "width": 3, "height": 4]), originSocketId: nil).id)
                _ = try await domain.messages.send(roomId: room.id, actor: u.id, input: Input(["text": "hi"]), originSocketId: nil)
            }
            for element in made {
                for u in users { _ = try await domain.reactions.toggle(roomId: room.id, elementId: element, actor: u.id, originSocketId: nil) }
            }
        }
        for u in users {
            let post = try await domain.posts.create(actor: u.id, input: Input(["content": "post"]))
            for v in users {
                _ = try await domain.posts.set(.like, on: true, postId: post.id, actor: v.id)
                _ = try await domain.posts.set(.save, on: true, postId: post.id, actor: v.id)
            }
            _ = try await domain.devices.register(actor: u.id, input: Input(["token": .string("device-\(u.username)"), "platform": "ios"]))
        }
    }

    func count(_ sql: String, _ args: [SQLValue] = []) throws -> Int64 { try db.readSync { c in try c.scalarInt(sql, args) } ?? -1 }

    func delete(_ table: String, id: String) throws {
        let n = try db.writeSync { c in try c.run("DELETE FROM \(table) WHERE id = ?", [.text(id)]) }
        XCTAssertEqual(n, 1)
    }

    func testDeletingARoomCascadesToItsMembersElementsReactionsAndMessages() throws {
        let (gone, kept) = (rooms[0].id, rooms[1].id)
        let keptBefore = try countsForRoom(kept)
        let notificationsBefore = try count("SELECT COUNT(*) FROM notifications WHERE room_id = ?", [.text(gone)])
        XCTAssertGreaterThan(notificationsBefore, 0)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM room_notifications WHERE room_id = ?", [.text(gone)]), 3, "one row per created element")
        XCTAssertEqual(try countsForRoom(gone), RoomCounts(members: 3, elements: 3, reactions: 9, messages: 3))

        try delete("rooms", id: gone)

        XCTAssertEqual(try countsForRoom(gone), RoomCounts(members: 0, elements: 0, reactions: 0, messages: 0))
        XCTAssertEqual(try countsForRoom(kept), keptBefore, "the other room is untouched")
        XCTAssertEqual(try count("SELECT COUNT(*) FROM reactions WHERE element_id NOT IN (SELECT id FROM elements)"), 0,
                       "reactions went with their elements")
        XCTAssertEqual(try count("SELECT COUNT(*) FROM users"), 3, "users outlive their rooms")
        // Personal notifications hold plain references (Migrations/0002): they outlive the room;
        // the room's own "element created" rows go with it.
        XCTAssertEqual(try count("SELECT COUNT(*) FROM notifications WHERE room_id = ?", [.text(gone)]), notificationsBefore)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM room_notifications WHERE room_id = ?", [.text(gone)]), 0)
    }

    func testDeletingAUserCascadesToEverythingTheyOwnAndNullsNameSetBy() throws {
        let carol = users[2].id
        XCTAssertEqual(try db.readSync { c in try c.scalarString("SELECT name_set_by FROM rooms WHERE id = ?", [.text(rooms[1].id)]) }, carol)
        for (table, column) in Self.userColumns {
            XCTAssertGreaterThan(try count("SELECT COUNT(*) FROM \(table) WHERE \(column) = ?", [.text(carol)]), 0, "\(table) before")
        }
        let carolsPosts = try db.readSync { c in try c.rows("SELECT id FROM posts WHERE author_id = ?", [.text(carol)]) { $0.string(0) } }

        try delete("users", id: carol)

        for (table, column) in Self.userColumns {
            XCTAssertEqual(try count("SELECT COUNT(*) FROM \(table) WHERE \(column) = ?", [.text(carol)]), 0, "\(table).\(column) ON DELETE CASCADE")
        }
        for post in carolsPosts {
            XCTAssertEqual(try count("SELECT COUNT(*) FROM post_interactions WHERE post_id = ?", [.text(post)]), 0, "likes and saves of a deleted post")
        }
        // rooms.name_set_by is ON DELETE SET NULL: the room stays, unnamed-by-anyone.
        XCTAssertEqual(try count("SELECT COUNT(*) FROM rooms"), 2)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM rooms WHERE id = ? AND name_set_by IS NULL", [.text(rooms[1].id)]), 1)
        // Carol's reactions on other users' elements went with her.
        XCTAssertEqual(try count("SELECT COUNT(*) FROM reactions"), 4 * 2, "2 users x 2 remaining elements per room x 2 rooms")

        // rooms.created_by is ON DELETE CASCADE: deleting Bob removes the room he created, with its content.
        try delete("users", id: users[1].id)
        XCTAssertEqual(try count("SELECT COUNT(*) FROM rooms"), 1)
        XCTAssertEqual(try countsForRoom(rooms[1].id), RoomCounts(members: 0, elements: 0, reactions: 0, messages: 0))
    }

    func testForeignKeysAreEnforcedOnTheWriterConnection() throws {
        XCTAssertThrowsError(try db.writeSync { c in
            try c.run("INSERT INTO room_members (room_id, user_id, joined_at, elements_seen_at, messages_read_at) VALUES ('no-such-room', ?, 0, 0, 0)",
                      [.text(users[0].id)])
        }, "a member row for a room that does not exist")
        XCTAssertThrowsError(try db.writeSync { c in
            try c.run("INSERT INTO devices (token, user_id, platform, created_at, updated_at) VALUES ('t', 'no-such-user', 'ios', 0, 0)")
        }, "a device for a user that does not exist")
        XCTAssertEqual(try db.readSync { c in try c.scalarInt("PRAGMA foreign_keys") }, 1)
    }

    // MARK: - Helpers

    /// The columns that reference users(id) with ON DELETE CASCADE in Migrations/0001–0002 (besides
    /// rooms.created_by, checked with Bob, who created a room).
    static let userColumns: [(String, String)] = [
        ("room_members", "user_id"), ("elements", "created_by"), ("reactions", "user_id"),
        ("messages", "user_id"), ("posts", "author_id"), ("post_interactions", "user_id"),
        ("devices", "user_id"), ("notifications", "user_id"),
    ]

    struct RoomCounts: Equatable { let members, elements, reactions, messages: Int64 }

    func countsForRoom(_ id: String) throws -> RoomCounts {
        RoomCounts(members: try count("SELECT COUNT(*) FROM room_members WHERE room_id = ?", [.text(id)]),
                   elements: try count("SELECT COUNT(*) FROM elements WHERE room_id = ?", [.text(id)]),
                   reactions: try count("SELECT COUNT(*) FROM reactions r JOIN elements e ON e.id = r.element_id WHERE e.room_id = ?", [.text(id)]),
                   messages: try count("SELECT COUNT(*) FROM messages WHERE room_id = ?", [.text(id)]))
    }
}
