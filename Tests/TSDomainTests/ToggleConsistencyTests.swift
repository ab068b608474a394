import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

/// The toggle on either backend: "two toggles racing for the same user end in a consistent
/// state, never a duplicate row or a 500", counters that are read then written stay equal to
/// their rows, and a toggle costs a handful of statements.
final class ToggleConsistencyTests: DomainTestCase {
    /// Many toggles of the same heart and of other users' hearts at once: every toggle answers,
    /// and the count equals the rows at the end (an even number of toggles per user: no heart).
    func testRacingTogglesEndConsistent() async throws {
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 4)
        let domain: TouchSyncDomain = self.domain
        let results = try await withThrowingTaskGroup(of: ToggleResult.Action.self) { group in
            for round in 0..<40 {
                let user = users[round % 4].id
                group.addTask { try await domain.reactions.toggle(roomId: room, elementId: element, actor: user, originSocketId: nil).action }
            }
            var all: [ToggleResult.Action] = []
            for try await a in group { all.append(a) }
            return all
        }
        XCTAssertEqual(results.filter { $0 == .added }.count, 20)
        XCTAssertEqual(results.filter { $0 == .removed }.count, 20)
        try db.readSync { c in
            XCTAssertEqual(try c.scalarInt("SELECT COUNT(*) FROM reactions WHERE element_id = ?", [.text(element)]), 0)
            XCTAssertEqual(try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ?", [.text(element)]), 0)
        }
        // One more toggle each for three users: three rows, count three, one row per user.
        for u in users.prefix(3) { _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: u.id, originSocketId: nil) }
        try db.readSync { c in
            XCTAssertEqual(try c.scalarInt("SELECT COUNT(*) FROM reactions WHERE element_id = ?", [.text(element)]), 3)
            XCTAssertEqual(try c.scalarInt("SELECT COUNT(DISTINCT user_id) FROM reactions WHERE element_id = ?", [.text(element)]), 3)
            XCTAssertEqual(try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ?", [.text(element)]), 3)
        }
    }

    func testRacingLikesKeepTheCountEqualToTheRows() async throws {
        let alice = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let post = try await domain.posts.create(actor: alice.id, input: Input(["content": "hello"]))
        let domain: TouchSyncDomain = self.domain
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<30 {
                group.addTask { _ = try await domain.posts.set(.like, on: i % 3 != 0, postId: post.id, actor: alice.id) }
            }
            try await group.waitForAll()
        }
        try db.readSync { c in
            let rows = try c.scalarInt("SELECT COUNT(*) FROM post_interactions WHERE post_id = ? AND liked_at IS NOT NULL", [.text(post.id)])
            XCTAssertEqual(try c.scalarInt("SELECT like_count FROM posts WHERE id = ?", [.text(post.id)]), rows)
            XCTAssertLessThanOrEqual(rows ?? 2, 1)
        }
    }

    func testRacingRegistrationsOfOneUsernameGiveOneUserAndConflicts() async throws {
        let domain: TouchSyncDomain = self.domain
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    do {
                        _ = try await domain.auth.createUser(username: "same", passwordHash: "x", firstName: nil, avatarUrl: nil)
                        return "created"
                    } catch let e as DomainError {
                        if case .conflict = e { return "conflict" }
                        return "other \(e)"
                    } catch {
                        return "other \(error)"
                    }
                }
            }
            var all: [String] = []
            for await o in group { all.append(o) }
            return all
        }
        XCTAssertEqual(outcomes.filter { $0 == "created" }.count, 1)
        XCTAssertEqual(outcomes.filter { $0 == "conflict" }.count, 5, "\(outcomes)")
    }

    func testAddingAMemberTwiceIsAConflict() async throws {
        let (users, room, _) = try await DomainFixture.roomWithElement(domain, users: 2)
        let carol = try await domain.auth.createUser(username: "carol", passwordHash: "x", firstName: nil, avatarUrl: nil)
        _ = try await domain.rooms.addMember(roomId: room, actor: users[0].id, input: Input(["userId": .string(carol.id)]))
        do {
            _ = try await domain.rooms.addMember(roomId: room, actor: users[1].id, input: Input(["userId": .string(carol.id)]))
            XCTFail("a second add must be refused")
        } catch let e as DomainError {
            guard case .conflict = e else { return XCTFail("expected a conflict, got \(e)") }
        }
    }

    /// Statements per toggle on SQLite. Adding someone else's heart: find the
    /// element and its count (with the membership check), look for the heart, insert, count + 1
    /// (not read again: the count before came with the element), the owner's notification, the
    /// top reactors. Removing the last one: find, look, delete, count - 1. The caller's row is not read when the request already has it. Each adds the
    /// room's event number: one `UPDATE` and, on SQLite, its read (`RoomEventNumbers`).
    func testToggleStatementCount() async throws {
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 2)
        await domain.notifications.stop()
        let bob = users[1]
        let add = try await executed {
            let r = try await domain.reactions.toggle(roomId: room, elementId: element, actor: bob.id, actorUser: bob, originSocketId: nil)
            XCTAssertEqual(r.action, .added)
            XCTAssertEqual(r.stats.totalReactions, 1)
            XCTAssertTrue(r.stats.hasReacted)
            XCTAssertEqual(r.stats.topReactors.map(\.id), [bob.id])
            XCTAssertEqual(r.reaction.user, bob)
        }
        XCTAssertEqual(add, 8)
        let remove = try await executed {
            let r = try await domain.reactions.toggle(roomId: room, elementId: element, actor: bob.id, actorUser: bob, originSocketId: nil)
            XCTAssertEqual(r.action, .removed)
            XCTAssertEqual(r.stats.totalReactions, 0)
            XCTAssertFalse(r.stats.hasReacted)
            XCTAssertEqual(r.stats.topReactors, [])
        }
        XCTAssertEqual(remove, 6)
        // Without the caller's row, one more statement reads it.
        let withoutUser = try await executed {
            _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: bob.id, originSocketId: nil)
        }
        XCTAssertEqual(withoutUser, 9)
    }

    func testToggleErrorsKeepTheirStatus() async throws {
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 1)
        let outsider = try await domain.auth.createUser(username: "outsider", passwordHash: "x", firstName: nil, avatarUrl: nil)
        func status(_ body: () async throws -> Void) async -> String {
            do { try await body(); return "ok" } catch let e as DomainError {
                switch e {
                case .notFound: return "404"
                case .forbidden: return "403"
                default: return "\(e)"
                }
            } catch { return "\(error)" }
        }
        let missingRoom = await status { _ = try await domain.reactions.toggle(roomId: "nope", elementId: element, actor: users[0].id, originSocketId: nil) }
        let notMember = await status { _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: outsider.id, originSocketId: nil) }
        let missingElement = await status { _ = try await domain.reactions.toggle(roomId: room, elementId: "nope", actor: users[0].id, originSocketId: nil) }
        XCTAssertEqual([missingRoom, notMember, missingElement], ["404", "403", "404"])
    }
}
