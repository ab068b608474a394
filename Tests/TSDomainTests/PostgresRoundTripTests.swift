import Foundation
import Logging
import TSStorage
import TSStorageTestSupport
import XCTest
@testable import TSDomain

/// Round trips to PostgreSQL per read (`Database.postgresRoundTrips`): a read's snapshot `BEGIN`
/// travels with its first statement, its `COMMIT` is not waited for, and the statements a read
/// announces (`SQLConnection.prefetch`) go in the same pipeline (PostgresConnection+Pipeline.swift).
/// Waiting for each step, my-rooms would cost four (BEGIN, the token's user, the rooms, COMMIT). Skips visibly
/// without TOUCHSYNC_TEST_POSTGRES_URL (scripts/test starts one).
final class PostgresRoundTripTests: XCTestCase {
    var db: Database!
    var domain: TouchSyncDomain!
    let envelope = JSONEnvelope(head: Array(#"{"data":"#.utf8), tail: Array("}".utf8))

    override func setUp() async throws {
        // One reader: each connection prepares a statement the first time it runs it (one round
        // trip, once), so a warm-up read leaves the measured ones with nothing to prepare.
        db = try Database(url: try makePostgresDatabaseURL(), configuration: DatabaseConfiguration(readerCount: 1))
        let db = db!
        addTeardownBlock { db.close() }
        try Migrator(directory: DomainFixture.migrationsDirectory).migrate(db)
        domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                 events: RecordingEventPublisher(), logger: Logger(label: "test"))
    }

    override func tearDown() async throws {
        await domain?.notifications.stop()
    }

    /// The round trips `body` waited for (the background notification worker is stopped first,
    /// so only `body` talks to the database).
    func roundTrips(_ body: () async throws -> Void) async throws -> UInt64 {
        let before = db.postgresRoundTrips.value
        try await body()
        return db.postgresRoundTrips.value - before
    }

    func seed() async throws -> (token: VerifiedToken, posts: [String]) {
        let a = try await domain.auth.createUser(username: "alice", passwordHash: "x", firstName: nil, avatarUrl: nil)
        let b = try await domain.auth.createUser(username: "bob", passwordHash: "x", firstName: nil, avatarUrl: nil)
        var posts: [String] = []
        for i in 0..<5 {
            let r = try await domain.rooms.create(actor: a.id, input: Input(["memberIds": [.string(b.id)], "name": .string("room \(i)")]))
            _ = try await domain.elements.create(roomId: r.id, actor: b.id, input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                                 originSocketId: nil)
            posts.append(try await domain.posts.create(actor: a.id, input: Input(["content": .string("p\(i)")])).id)
        }
        _ = try await domain.posts.set(.like, on: true, postId: posts[0], actor: a.id)
        await domain.notifications.stop()
        return (try domain.auth.verifyToken(await domain.auth.issueToken(userId: a.id)), posts)
    }

    func testMyRoomsWithItsTokenCheckIsOneRoundTrip() async throws {
        try XCTSkipUnless(db.dialect == .postgres)
        let (token, _) = try await seed()
        _ = try await domain.rooms.myRoomsJSON(token: token, envelope: envelope)  // prepares the statements once
        for _ in 0..<3 {
            var body: [UInt8] = []
            let trips = try await roundTrips { body = try await domain.rooms.myRoomsJSON(token: token, envelope: envelope).body }
            XCTAssertEqual(trips, 1)
            let rooms = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])["data"] as? [[String: Any]]
            XCTAssertEqual(rooms?.count, 5)
        }
    }

    func testInteractionStateWithItsTokenCheckIsOneRoundTrip() async throws {
        try XCTSkipUnless(db.dialect == .postgres)
        let (token, posts) = try await seed()
        _ = try await domain.posts.interactionStatesJSON(postIds: posts, token: token, envelope: envelope)
        var body: [UInt8] = []
        let trips = try await roundTrips { body = try await domain.posts.interactionStatesJSON(postIds: posts, token: token, envelope: envelope).body }
        XCTAssertEqual(trips, 1)
        XCTAssertTrue(String(decoding: body, as: UTF8.self).contains(#""isLiked":true"#), String(decoding: body, as: UTF8.self))
    }

    /// A revoked token: the rooms query went with the token check, but its rows are dropped with
    /// the snapshot, and the next read on the connection is not confused by them.
    func testARevokedTokenIsRefusedAndItsPrefetchedRowsAreNotServedToTheNextRead() async throws {
        try XCTSkipUnless(db.dialect == .postgres)
        let (token, _) = try await seed()
        try await db.write { c in try c.run("UPDATE users SET token_version = token_version + 1 WHERE id = ?", [.text(token.userId)]) }
        for _ in 0..<3 {
            do {
                _ = try await domain.rooms.myRoomsJSON(token: token, envelope: envelope)
                XCTFail("a revoked token was accepted")
            } catch let error as DomainError {
                XCTAssertEqual(error.status, 401)
            }
        }
        let fresh = try domain.auth.verifyToken(await domain.auth.issueToken(userId: token.userId))
        let body = try await domain.rooms.myRoomsJSON(token: fresh, envelope: envelope).body
        let rooms = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])["data"] as? [[String: Any]]
        XCTAssertEqual(rooms?.count, 5)
    }

    /// A read that runs no statement costs nothing; an error in a read's first statement (sent
    /// with its BEGIN) is the server's error, and the connection serves the next read.
    func testAnEmptyReadIsFreeAndAFailedFirstStatementLeavesTheConnectionUsable() async throws {
        try XCTSkipUnless(db.dialect == .postgres)
        await domain.notifications.stop()
        let empty = try await roundTrips { try await db.read { _ in } }
        XCTAssertEqual(empty, 0)
        for _ in 0..<3 {
            do {
                try await db.read { c in _ = try c.first("SELECT no_such_column FROM users") { $0.int(0) } }
                XCTFail("the statement should fail")
            } catch let error as StorageError {
                XCTAssertTrue("\(error)".contains("no_such_column"), "\(error)")
            }
            let n = try await db.read { c in try c.scalarInt("SELECT count(*) FROM users") }
            XCTAssertEqual(n, 0)
        }
    }

    /// Two statements of one read see one snapshot, as before: a write committed between them
    /// (on the writer connection) is not seen by the second.
    func testTheStatementsOfOneReadStillShareOneSnapshot() async throws {
        try XCTSkipUnless(db.dialect == .postgres)
        await domain.notifications.stop()
        let db = db!
        let (before, after) = try db.readSync { c -> (Int64?, Int64?) in
            let before = try c.scalarInt("SELECT count(*) FROM users")
            try db.writeSync { w in
                try w.run("INSERT INTO users (id, username, password_hash, created_at) VALUES ('u1', 'carol', 'x', 0)")
            }
            return (before, try c.scalarInt("SELECT count(*) FROM users"))
        }
        XCTAssertEqual(before, 0)
        XCTAssertEqual(after, 0)
        let now = try await db.read { c in try c.scalarInt("SELECT count(*) FROM users") }
        XCTAssertEqual(now, 1)
    }
}
