import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import TSStorageTestSupport
import XCTest

/// Migrations/0008 (and Migrations/postgres/0005) move every like (`post_likes`) and save
/// (`post_saves`) into one `post_interactions` row per (post, user): a database filled under the
/// old schema keeps every like and save with its time, a pair in both tables becomes one row, and
/// the domain answers the same states, counts and export afterwards.
final class PostInteractionsMigrationTests: XCTestCase {
    func testSQLiteMigrationKeepsEveryLikeAndSave() async throws {
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        defer { db.close() }
        try await checkMigration(db, file: "0008_post_interactions.sql", subdirectory: nil)
    }

    /// Skips visibly without TOUCHSYNC_TEST_POSTGRES_URL (scripts/test starts one).
    func testPostgresMigrationKeepsEveryLikeAndSave() async throws {
        let db = try Database(url: try makePostgresDatabaseURL())
        defer { db.close() }
        try await checkMigration(db, file: "0005_post_interactions.sql", subdirectory: Migrator.postgresSubdirectory)
    }

    struct Mark: Hashable { let post: String, user: String, at: Int64 }

    /// Migrates `db` up to the migration before `file`, fills likes and saves the old way, applies
    /// `file` and compares.
    func checkMigration(_ db: Database, file: String, subdirectory: String?) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("post-interactions-\(UUID().uuidString)")
        let target = subdirectory.map { dir.appendingPathComponent($0) } ?? dir
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var source = URL(fileURLWithPath: DomainFixture.migrationsDirectory)
        if let subdirectory { source.appendPathComponent(subdirectory) }
        let all = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasSuffix(".sql") }.sorted()
        XCTAssertTrue(all.contains(file))
        for f in all where f < file { try FileManager.default.copyItem(at: source.appendingPathComponent(f), to: target.appendingPathComponent(f)) }
        try Migrator(directory: dir.path).migrate(db)

        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: RecordingEventPublisher(), logger: Logger(label: "test"))
        var users: [String] = []
        for i in 0..<4 { users.append(try await domain.auth.createUser(username: "user\(i)", passwordHash: "x", firstName: nil, avatarUrl: nil).id) }
        var posts: [String] = []
        for i in 0..<5 { posts.append(try await domain.posts.create(actor: users[i % 4], input: Input(["content": .string("post \(i)")])).id) }
        // Likes and saves as the old code wrote them: some pairs only liked, some only saved, some both.
        var liked: Set<Mark> = [], saved: Set<Mark> = []
        for (p, post) in posts.enumerated() {
            for (u, user) in users.enumerated() {
                if (p + u) % 2 == 0 { liked.insert(Mark(post: post, user: user, at: Int64(1_000 + 10 * p + u))) }
                if (p * u) % 3 == 1 || u == 3 { saved.insert(Mark(post: post, user: user, at: Int64(2_000 + 10 * p + u))) }
            }
        }
        let likes = liked, saves = saved
        let both = likes.filter { l in saves.contains { $0.post == l.post && $0.user == l.user } }
        XCTAssertFalse(both.isEmpty, "some pairs are both liked and saved")
        try await db.write { c in
            for m in likes { try c.run("INSERT INTO post_likes (post_id, user_id, created_at) VALUES (?, ?, ?)", [.text(m.post), .text(m.user), .int(m.at)]) }
            for m in saves { try c.run("INSERT INTO post_saves (post_id, user_id, created_at) VALUES (?, ?, ?)", [.text(m.post), .text(m.user), .int(m.at)]) }
            try c.run("UPDATE posts SET like_count = (SELECT count(*) FROM post_likes l WHERE l.post_id = posts.id)")
            try c.run("UPDATE posts SET save_count = (SELECT count(*) FROM post_saves s WHERE s.post_id = posts.id)")
        }

        try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: target.appendingPathComponent(file))
        XCTAssertEqual(try Migrator(directory: dir.path).migrate(db).count, 1)

        let (likedAfter, savedAfter, rows) = try db.readSync { c in
            (Set(try c.rows("SELECT post_id, user_id, liked_at FROM post_interactions WHERE liked_at IS NOT NULL") { Mark(post: $0.string(0), user: $0.string(1), at: $0.int(2)) }),
             Set(try c.rows("SELECT post_id, user_id, saved_at FROM post_interactions WHERE saved_at IS NOT NULL") { Mark(post: $0.string(0), user: $0.string(1), at: $0.int(2)) }),
             try c.scalarInt("SELECT count(*) FROM post_interactions"))
        }
        XCTAssertEqual(likedAfter, likes, "every like kept, with its time")
        XCTAssertEqual(savedAfter, saves, "every save kept, with its time")
        XCTAssertEqual(rows, Int64(likes.count + saves.count - both.count), "a pair both liked and saved is one row")
        let catalog = db.dialect == .postgres
            ? "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('post_likes', 'post_saves')"
            : "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('post_likes', 'post_saves')"
        let oldTables = try db.readSync { c in try c.scalarInt(catalog) }
        XCTAssertEqual(oldTables, 0, "the two old tables are gone")

        // The domain reads the same states and counts from the migrated rows.
        for user in users {
            let states = try await domain.posts.interactionStates(postIds: posts, viewer: user).interactions
            XCTAssertEqual(states.map(\.postId), posts)
            for s in states {
                XCTAssertEqual(s.isLiked, likes.contains { $0.post == s.postId && $0.user == user }, "\(s.postId) liked by \(user)")
                XCTAssertEqual(s.isSaved, saves.contains { $0.post == s.postId && $0.user == user }, "\(s.postId) saved by \(user)")
                XCTAssertEqual(s.likeCount, Int64(likes.filter { $0.post == s.postId }.count))
                XCTAssertEqual(s.saveCount, Int64(saves.filter { $0.post == s.postId }.count))
            }
        }
        // Clearing the like of a pair that is also saved keeps the row (the save); clearing the
        // save too removes it; counts follow.
        let pair = try XCTUnwrap(both.first)
        let unliked = try await domain.posts.set(.like, on: false, postId: pair.post, actor: pair.user)
        XCTAssertFalse(unliked.isLiked)
        XCTAssertTrue(unliked.isSaved)
        let unsaved = try await domain.posts.set(.save, on: false, postId: pair.post, actor: pair.user)
        XCTAssertFalse(unsaved.isSaved)
        XCTAssertEqual(unsaved.likeCount, Int64(likes.filter { $0.post == pair.post }.count - 1))
        XCTAssertEqual(unsaved.saveCount, Int64(saves.filter { $0.post == pair.post }.count - 1))
        let left = try db.readSync { c in
            try c.scalarInt("SELECT count(*) FROM post_interactions WHERE post_id = ? AND user_id = ?", [.text(pair.post), .text(pair.user)])
        }
        XCTAssertEqual(left, 0, "a pair with neither a like nor a save has no row")
        let again = try await domain.posts.set(.save, on: true, postId: pair.post, actor: pair.user)
        XCTAssertTrue(again.isSaved)
        XCTAssertFalse(again.isLiked)
        let twice = try await domain.posts.set(.save, on: true, postId: pair.post, actor: pair.user)
        XCTAssertEqual(twice.saveCount, again.saveCount, "saving twice counts once")
        await domain.notifications.stop()
    }
}
