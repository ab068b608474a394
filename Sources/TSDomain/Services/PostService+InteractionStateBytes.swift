import TSJSON
import TSStorage

extension PostService {
    /// `POST /api/mobile/posts/interaction-state`: the like/save state of 1–50 posts for the
    /// caller, written straight into the response body (`envelope` around `InteractionStateData`;
    /// no `JSONValue` tree), on a reader thread, in the same read that checks the token's user.
    /// Duplicates are answered once, unknown ids left out, the rest in request order (as
    /// `interactionStates`). Returns the caller (for the access log) and the body.
    public func interactionStatesJSON(postIds: [String], token: VerifiedToken, envelope: JSONEnvelope) async throws
        -> (user: PublicUser, body: [UInt8]) {
        guard !postIds.isEmpty else { throw DomainError.validation(field: "postIds", message: "must contain at least 1 id") }
        guard postIds.count <= Self.maxInteractionStateIds else {
            throw DomainError.validation(field: "postIds", message: "must contain at most \(Self.maxInteractionStateIds) ids")
        }
        var position: [String: Int] = [:]
        position.reserveCapacity(postIds.count)
        var unique: [String] = []
        unique.reserveCapacity(postIds.count)
        for id in postIds where position[id] == nil {
            position[id] = unique.count
            unique.append(id)
        }
        let ids = unique, index = position
        return try await db.read { c in
            let user = try AuthService.sessionUser(c, token)
            // One statement for every request size: the unused placeholders are NULL, which no id equals.
            var args: [SQLValue] = [.text(user.id), .text(user.id)]
            args.reserveCapacity(2 + Self.maxInteractionStateIds)
            for id in ids { args.append(.text(id)) }
            for _ in ids.count..<Self.maxInteractionStateIds { args.append(.null) }
            var slots = [PostInteractionState?](repeating: nil, count: ids.count)
            try c.forEachRow(Self.statesByIdSQL, args) { r in
                // The response carries the request's own string for the id (equal to the row's).
                guard let i = index[r.string(0)] else { return }
                slots[i] = PostInteractionState(postId: ids[i], isLiked: r.int(3) == 1, isSaved: r.int(4) == 1,
                                                likeCount: r.int(1), saveCount: r.int(2))
            }
            let states = InteractionStates(interactions: slots.compactMap { $0 })
            var w = JSONBytesWriter(capacity: 128 + 96 * states.interactions.count)
            w.raw(envelope.head)
            w.objectValue { states.writeJSON(into: &$0) }
            w.raw(envelope.tail)
            return (user, w.bytes)
        }
    }

    /// The viewer (twice), then `maxInteractionStateIds` ids or NULLs. Portable SQL (SQLite and
    /// PostgreSQL): `?` placeholders, `CASE WHEN EXISTS` for a 0/1 integer.
    static let statesByIdSQL = """
        SELECT p.id, p.like_count, p.save_count,
               CASE WHEN EXISTS(SELECT 1 FROM post_likes l WHERE l.post_id = p.id AND l.user_id = ?) THEN 1 ELSE 0 END,
               CASE WHEN EXISTS(SELECT 1 FROM post_saves s WHERE s.post_id = p.id AND s.user_id = ?) THEN 1 ELSE 0 END
        FROM posts p WHERE p.id IN (\(Array(repeating: "?", count: maxInteractionStateIds).joined(separator: ", ")))
        """
}
