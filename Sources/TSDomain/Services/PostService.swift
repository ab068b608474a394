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
    /// Races (two nodes, or two requests of one user): the primary key (post, user) decides which
    /// insert or delete changed a row, and only that one moves the counter, in a single
    /// `UPDATE … SET n = n ± 1`: the count always equals the rows, with no lock needed.
    public func set(_ interaction: Interaction, on: Bool, postId: String, actor: String) async throws -> PostInteractionState {
        let (table, counter) = interaction == .like ? ("post_likes", "like_count") : ("post_saves", "save_count")
        let now = clock.nowSeconds()
        return try await db.write { c in
            guard try c.scalarInt("SELECT 1 FROM posts WHERE id = ?", [.text(postId)]) != nil else { throw DomainError.notFound("Post") }
            if on {
                if try c.run("INSERT INTO \(table) (post_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT (post_id, user_id) DO NOTHING",
                             [.text(postId), .text(actor), .int(now)]) == 1 {
                    try c.run("UPDATE posts SET \(counter) = \(counter) + 1 WHERE id = ?", [.text(postId)])
                }
            } else if try c.run("DELETE FROM \(table) WHERE post_id = ? AND user_id = ?", [.text(postId), .text(actor)]) == 1 {
                try c.run("UPDATE posts SET \(counter) = \(counter) - 1 WHERE id = ?", [.text(postId)])
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
        var args: [SQLValue] = [.text(viewer), .text(viewer)]
        args.reserveCapacity(ids.count + 2)
        for id in ids { args.append(.text(id)) }
        var byId: [String: PostInteractionState] = [:]
        for state in try c.rows("""
            SELECT p.id, p.like_count, p.save_count,
                   CASE WHEN EXISTS(SELECT 1 FROM post_likes l WHERE l.post_id = p.id AND l.user_id = ?) THEN 1 ELSE 0 END,
                   CASE WHEN EXISTS(SELECT 1 FROM post_saves s WHERE s.post_id = p.id AND s.user_id = ?) THEN 1 ELSE 0 END
            FROM posts p WHERE p.id IN (\(SQLList.placeholders(ids.count)))
            """, args, {
                PostInteractionState(postId: $0.string(0), isLiked: $0.int(3) == 1, isSaved: $0.int(4) == 1, likeCount: $0.int(1), saveCount: $0.int(2))
            }) {
            byId[state.postId] = state
        }
        return ids.compactMap { byId[$0] }
    }
}
