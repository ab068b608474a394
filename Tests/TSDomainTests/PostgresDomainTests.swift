import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import TSStorageTestSupport
import XCTest

/// The domain on PostgreSQL: every service's SQL runs on the second
/// backend, and two processes' worth of `Database`s ("nodes") on one PostgreSQL database race
/// for the same rows. Skips visibly without TOUCHSYNC_TEST_POSTGRES_URL (scripts/test starts one).
final class PostgresDomainTests: XCTestCase {
    var nodes: [(Database, TouchSyncDomain)] = []
    /// What each node published, in its commit order.
    var published: [RecordingEventPublisher] = []

    override func setUp() async throws {
        let url = try makePostgresDatabaseURL()
        for _ in 0..<2 {
            let db = try Database(url: url)
            addTeardownBlock { db.close() }
            let events = RecordingEventPublisher()
            published.append(events)
            nodes.append((db, TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                              events: events, logger: Logger(label: "test"))))
        }
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(nodes[0].0)
    }

    override func tearDown() async throws {
        for (_, d) in nodes { await d.notifications.stop() }
        nodes = []
        published = []
    }

    /// The room's top reactors, read for all its elements in one query, are
    /// those the one-element read gives, in the same order, on PostgreSQL too; the seen marker
    /// resets the badge.
    func testRoomListTopReactorsMatchOneElementReads() async throws {
        let domain = nodes[0].1
        let (users, room) = try await seedRoom(domain, reactedElements: 20, plainElements: 3)
        let listed = try await domain.elements.list(roomId: room, viewer: users[0].id)
        XCTAssertEqual(listed.filter { $0.reactions != nil }.count, 20)
        try await assertTopReactorsMatchOneElementReads(domain, room: room, viewer: users[0].id, listed: listed)
        _ = try await domain.elements.join(roomId: room, viewer: users[1].id) { _ in }
        let unseen = try await domain.rooms.myRooms(viewer: users[1].id).first?.unseenElements
        XCTAssertEqual(unseen, 0)
    }

    /// The contract: "two toggles racing for the same user end in a consistent state, never a
    /// duplicate row or a 500". Both nodes toggle the same hearts at once, many times.
    func testTwoNodesTogglingTheSameHeartsStayConsistent() async throws {
        let (a, b) = (nodes[0].1, nodes[1].1)
        let (users, room, element) = try await DomainFixture.roomWithElement(a, users: 3)
        let outcomes = try await withThrowingTaskGroup(of: ToggleResult.Action.self) { group in
            for i in 0..<120 {
                let node = i % 2 == 0 ? a : b
                let user = users[(i / 2) % 3].id
                group.addTask { try await node.reactions.toggle(roomId: room, elementId: element, actor: user, originSocketId: nil).action }
            }
            var all: [ToggleResult.Action] = []
            for try await o in group { all.append(o) }
            return all
        }
        XCTAssertEqual(outcomes.count, 120, "every toggle answered")
        XCTAssertEqual(outcomes.filter { $0 == .added }.count, 60)
        try nodes[0].0.readSync { c in
            let rows = try c.scalarInt("SELECT COUNT(*) FROM reactions WHERE element_id = ?", [.text(element)])
            XCTAssertEqual(rows, 0, "120 toggles = 40 per user: no heart left")
            XCTAssertEqual(try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ?", [.text(element)]), rows)
        }
        // An odd number per user from both nodes: one heart each, a count of three.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, u) in users.enumerated() {
                let node = i % 2 == 0 ? a : b
                group.addTask { _ = try await node.reactions.toggle(roomId: room, elementId: element, actor: u.id, originSocketId: nil) }
            }
            try await group.waitForAll()
        }
        try nodes[1].0.readSync { c in
            XCTAssertEqual(try c.scalarInt("SELECT COUNT(*) FROM reactions WHERE element_id = ?", [.text(element)]), 3)
            XCTAssertEqual(try c.scalarInt("SELECT reaction_count FROM elements WHERE id = ?", [.text(element)]), 3)
        }
        let stats = try await b.elements.element(roomId: room, elementId: element, viewer: users[0].id)?.reactions
        XCTAssertEqual(stats?.count, 3)
        XCTAssertEqual(stats?.topReactors.count, 3)
    }

    func testTwoNodesRacingOnCountersAndUniqueRows() async throws {
        let (a, b) = (nodes[0].1, nodes[1].1)
        let (users, room, _) = try await DomainFixture.roomWithElement(a, users: 2)
        let post = try await a.posts.create(actor: users[0].id, input: Input(["content": "hello"]))
        // Likes from both nodes at once; elements created from both nodes at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                let node = i % 2 == 0 ? a : b
                let on = i % 4 < 2
                group.addTask { _ = try await node.posts.set(.like, on: on, postId: post.id, actor: users[1].id) }
                group.addTask {
                    _ = try await node.elements.create(roomId: room, actor: users[i % 2].id,
                                                       input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]), originSocketId: nil)
                }
            }
            try await group.waitForAll()
        }
        try nodes[0].0.readSync { c in
            XCTAssertEqual(try c.scalarInt("SELECT like_count FROM posts WHERE id = ?", [.text(post.id)]),
                           try c.scalarInt("SELECT COUNT(*) FROM post_interactions WHERE post_id = ? AND liked_at IS NOT NULL", [.text(post.id)]))
            XCTAssertEqual(try c.scalarInt("SELECT element_count FROM rooms WHERE id = ?", [.text(room)]),
                           try c.scalarInt("SELECT COUNT(*) FROM elements WHERE room_id = ?", [.text(room)]))
        }
        // Two registrations of one username on two nodes: one user, one 409.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for node in [a, b] {
                group.addTask { (try? await node.auth.createUser(username: "same", passwordHash: "x", firstName: nil, avatarUrl: nil)) != nil }
            }
            var all: [Bool] = []
            for await o in group { all.append(o) }
            return all
        }
        XCTAssertEqual(outcomes.filter { $0 }.count, 1)
    }

    /// Every service once on PostgreSQL, with creation order, paging and the notification
    /// delivery cursors checked along the way.
    func testEveryServiceRunsOnPostgres() async throws {
        let domain = nodes[0].1
        let (users, room, element) = try await DomainFixture.roomWithElement(domain, users: 4)
        let viewer = users[0].id
        var elements = [element]
        for i in 1..<5 {
            elements.append(try await domain.elements.create(roomId: room, actor: users[i % 4].id,
                                                             input: Input(["type": "note", "positionX": .int(Int64(i)), "positionY": 0, "width": 1, "height": 1]),
                                                             originSocketId: nil).id)
        }
        let listedElements = try await domain.elements.list(roomId: room, viewer: viewer)
        XCTAssertEqual(listedElements.map(\.id), elements)
        for u in users { _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: u.id, originSocketId: nil) }
        var reactors: [String] = []
        var before: String? = nil
        repeat {
            let page = try await domain.reactions.list(roomId: room, elementId: element, viewer: viewer, limit: 3, before: before)
            reactors += page.reactions.map(\.userId)
            before = page.reactions.count == 3 ? page.reactions.last?.id : nil
        } while before != nil
        XCTAssertEqual(reactors, users.map(\.id).reversed())
        let reacted = try await DatabaseRecipientReads(db: domain.db).heartedBy(elementId: element)
        XCTAssertEqual(reacted, Set(users.map(\.id)))
        var messages: [String] = []
        for i in 0..<5 { messages.append(try await domain.messages.send(roomId: room, actor: users[i % 4].id, input: Input(["text": .string("m\(i)")]), originSocketId: nil).id) }
        let page1 = try await domain.messages.list(roomId: room, viewer: viewer, limit: 3, before: nil)
        let page2 = try await domain.messages.list(roomId: room, viewer: viewer, limit: 3, before: page1.last?.id)
        XCTAssertEqual((page1 + page2).map(\.id), messages.reversed())
        let rooms = try await domain.rooms.myRooms(viewer: viewer)
        XCTAssertEqual(rooms.first?.elementCount, 5)
        _ = try await domain.rooms.detail(roomId: room, viewer: viewer)
        _ = try await domain.rooms.rename(roomId: room, actor: viewer, input: Input(["name": "renamed"]), originSocketId: nil)
        _ = try await domain.rooms.markSeen(roomId: room, actor: viewer)
        _ = try await domain.rooms.markMessagesRead(roomId: room, actor: viewer)
        _ = try await domain.elements.update(roomId: room, elementId: element, actor: viewer, input: Input(["positionX": 5]), originSocketId: nil)
        var posts: [String] = []
        for i in 0..<5 { posts.append(try await domain.posts.create(actor: users[1].id, input: Input(["content": .string("p\(i)")])).id) }
        _ = try await domain.posts.set(.like, on: true, postId: posts[2], actor: viewer)
        _ = try await domain.posts.set(.save, on: true, postId: posts[4], actor: viewer)
        let states = try await domain.posts.interactionStates(postIds: posts.reversed() + ["missing"], viewer: viewer)
        XCTAssertEqual(states.interactions.map(\.postId), posts.reversed())
        XCTAssertEqual(states.interactions.filter(\.isLiked).map(\.postId), [posts[2]])
        _ = try await domain.devices.register(actor: users[0].id, input: Input(["token": "tok", "platform": "ios"]))
        _ = try await domain.devices.register(actor: users[1].id, input: Input(["token": "tok", "platform": "android"]))
        await domain.notifications.stop()
        while try await domain.notifications.drainBatch() > 0 {}
        let listed = try await domain.notifications.list(userId: viewer, limit: 50)
        XCTAssertFalse(listed.isEmpty)
        XCTAssertTrue(listed.allSatisfy(\.delivered), "the drain moved both cursors past every row")
        _ = try await domain.notifications.prune(NotificationRetention(retention: .zero, maxPerFeed: 1, batchSize: 2))
        let outsider = try await domain.auth.createUser(username: "outsider", passwordHash: "x", firstName: nil, avatarUrl: nil)
        _ = try await domain.rooms.addMember(roomId: room, actor: viewer, input: Input(["username": "outsider"]))
        do {
            _ = try await domain.rooms.addMember(roomId: room, actor: viewer, input: Input(["userId": .string(outsider.id)]))
            XCTFail("a second add is a conflict")
        } catch DomainError.conflict {}
        try await domain.rooms.leave(roomId: room, actor: outsider.id)
        _ = try await domain.elements.clear(roomId: room, actor: viewer, originSocketId: nil)
    }
}
