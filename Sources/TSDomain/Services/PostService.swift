import TSCrypto
import TSStorage
import TSJSON

/// Posts and their like/save state (docs/api.md, "Posts"; mobile envelope).
public struct PostService: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource

    /// The bounds of one interaction-state request (1–50 post ids: a screen's worth, answered from one query).
    public static let maxInteractionStateIds = 50

    public func create(actor: String, input: Input) async throws -> Post {
        let content = try input.string("content", maxLength: 10_000)
        let imageUrl = try input.optionalString("imageUrl", maxLength: 4096)
        let id = UUIDGenerator.lowercaseV4()
        let now = clock.nowSeconds()
        let seq = sequence.next()
        try await db.write { c in
            try c.run("INSERT INTO posts (id, author_id, content, image_url, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)",
                      [.text(id), .text(actor), .text(content), .of(imageUrl), .int(now), .int(seq)])
        }
        return Post(id: id, authorId: actor, content: content, imageUrl: imageUrl, createdAt: now, likeCount: 0, saveCount: 0)
    }

    public enum Interaction: Sendable { case like, save }

    /// Sets (or clears) the caller's like or save; idempotent. Returns the post's new state.
    ///
    /// The like and the save of one (post, user) share a `post_interactions` row (Migrations/0008):
    /// `liked_at` / `saved_at` set or NULL; a row with neither is deleted in the same transaction.
    ///
    /// Races (two nodes, or two requests of one user): the statement that changes the column from
    /// NULL to a time (the upsert) or from a time to NULL (the update) moves the counter, and only
    /// that one, in a single `UPDATE … SET n = n ± 1`: the count always equals the set columns. The
    /// update holds the row until COMMIT, so when a like and a save are cleared at once the second
    /// to clear sees the first's NULL and deletes the emptied row.
    public func set(_ interaction: Interaction, on: Bool, postId: String, actor: String) async throws -> PostInteractionState {
        let (column, counter) = interaction == .like ? ("liked_at", "like_count") : ("saved_at", "save_count")
        let now = clock.nowSeconds()
        return try await db.write { c in
            guard try c.scalarInt("SELECT 1 FROM posts WHERE id = ?", [.text(postId)]) != nil else { throw DomainError.notFound("Post") }
            let key: [SQLValue] = [.text(postId), .text(actor)]
            if on {
                // A new row, or the row of the other kind gaining this one; already set: no change.
                if try c.run("""
                    INSERT INTO post_interactions (post_id, user_id, \(column)) VALUES (?, ?, ?)
                    ON CONFLICT (post_id, user_id) DO UPDATE SET \(column) = excluded.\(column) WHERE post_interactions.\(column) IS NULL
                    """, key + [.int(now)]) == 1 {
                    try c.run("UPDATE posts SET \(counter) = \(counter) + 1 WHERE id = ?", [.text(postId)])
                }
            } else if try c.run("UPDATE post_interactions SET \(column) = NULL WHERE post_id = ? AND user_id = ? AND \(column) IS NOT NULL", key) == 1 {
                try c.run("UPDATE posts SET \(counter) = \(counter) - 1 WHERE id = ?", [.text(postId)])
                try c.run("DELETE FROM post_interactions WHERE post_id = ? AND user_id = ? AND liked_at IS NULL AND saved_at IS NULL", key)
            }
            return try Self.states(c, ids: [postId], viewer: actor)[0]
        }
    }

    public struct InteractionStates: Sendable {
        public let interactions: [PostInteractionState]
        /// The shape is written once, in `writeJSON(into:)` (Room+JSONShape.swift).
        public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }
    }

    /// 1–50 ids; duplicates answered once; unknown ids left out; one SQL query for all.
    public func interactionStates(postIds: [String], viewer: String) async throws -> InteractionStates {
        guard !postIds.isEmpty else { throw DomainError.validation(field: "postIds", message: "must contain at least 1 id") }
        guard postIds.count <= Self.maxInteractionStateIds else {
            throw DomainError.validation(field: "postIds", message: "must contain at most \(Self.maxInteractionStateIds) ids")
        }
        var seen = Set<String>()
        let unique = postIds.filter { seen.insert($0).inserted }
        return InteractionStates(interactions: try await db.read { c in try Self.states(c, ids: unique, viewer: viewer) })
    }

    /// The states of `ids` in their given order, from a single statement (`IN (?, …)`, at most
    /// `maxInteractionStateIds` ids; the rows are put back in the asked order here).
    static func states(_ c: SQLConnection, ids: [String], viewer: String) throws -> [PostInteractionState] {
        var args: [SQLValue] = [.text(viewer)]
        args.reserveCapacity(ids.count + 1)
        for id in ids { args.append(.text(id)) }
        var byId: [String: PostInteractionState] = [:]
        for state in try c.rows("""
            SELECT p.id, p.like_count, p.save_count, i.liked_at, i.saved_at
            FROM posts p LEFT JOIN post_interactions i ON i.post_id = p.id AND i.user_id = ?
            WHERE p.id IN (\(SQLList.placeholders(ids.count)))
            """, args, {
                PostInteractionState(postId: $0.string(0), isLiked: !$0.isNull(3), isSaved: !$0.isNull(4), likeCount: $0.int(1), saveCount: $0.int(2))
            }) {
            byId[state.postId] = state
        }
        return ids.compactMap { byId[$0] }
    }
}
