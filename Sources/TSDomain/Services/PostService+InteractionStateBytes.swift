import TSJSON
import TSStorage

extension PostService {
    /// `POST /api/mobile/posts/interaction-state`: the like/save state of 1–50 posts for the
    /// caller, written straight into the response body (`envelope` around `InteractionStateData`;
    /// no `JSONValue` tree), read on a reader thread in the same read that checks the token's user.
    /// Duplicates are answered once, unknown ids left out, the rest in request order (as
    /// `interactionStates`). Returns the caller (for the access log) and the body.
    public func interactionStatesJSON(postIds: [String], token: VerifiedToken, envelope: JSONEnvelope) async throws
        -> (user: PublicUser, body: [UInt8]) {
        guard !postIds.isEmpty else { throw DomainError.validation(field: "postIds", message: "must contain at least 1 id") }
        guard postIds.count <= Self.maxInteractionStateIds else {
            throw DomainError.validation(field: "postIds", message: "must contain at most \(Self.maxInteractionStateIds) ids")
        }
        // Duplicates answered once, at their first place: `unique` in request order.
        let ids = Self.firstOccurrences(postIds)
        // The rows are read on a reader thread into at most 50 small values; the bytes are written
        // here, after the read (about 5 KB, no tree). Writing them inside the read measured slower
        // at 64 connections on the shared 2-core machine (bench/RESULTS.md, "Read paths without a
        // JSON tree"): the reader's job grew and the replies queued behind it.
        let (user, states) = try await db.read { c in
            // One statement for every request size: the unused ids are NULL, which no id equals.
            // It needs only the token's user id: on PostgreSQL it travels with the token's user
            // read, one round trip for both (SQLConnection.prefetch).
            var args: [SQLValue] = []
            args.reserveCapacity(Self.maxInteractionStateIds + 2)
            for id in ids { args.append(.text(id)) }
            for _ in ids.count..<Self.maxInteractionStateIds { args.append(.null) }
            args.append(.text(token.userId))
            args.append(.text(token.userId))
            c.prefetch(Self.statesByIdSQL, args)
            let user = try AuthService.sessionUser(c, token)
            var slots = [PostInteractionState?](repeating: nil, count: ids.count)
            try c.forEachRow(Self.statesByIdSQL, args) { r in
                // Column 0 is the id's place in `ids`: no String per row, no lookup. The response
                // carries the request's own string for the id (equal to the row's).
                let i = Int(r.int(0))
                guard i >= 0, i < ids.count else { return }
                slots[i] = PostInteractionState(postId: ids[i], isLiked: r.int(3) == 1, isSaved: r.int(4) == 1,
                                                likeCount: r.int(1), saveCount: r.int(2))
            }
            return (user, InteractionStates(interactions: slots.compactMap { $0 }))
        }
        var w = JSONBytesWriter(capacity: 128 + 96 * states.interactions.count)
        w.raw(envelope.head)
        w.objectValue { states.writeJSON(into: &$0) }
        w.raw(envelope.tail)
        return (user, w.bytes)
    }

    /// `ids` without repeats, each at its first place. At most `maxInteractionStateIds` ids: a
    /// table of 128 slots (indices into `ids`) keyed by a hash of each id's length and first and
    /// last eight bytes, probed linearly; equal hashes compare the whole ids. A `Set<String>`
    /// hashed every byte of every id with SipHash (about 4 % of an interaction-state request).
    static func firstOccurrences(_ ids: [String]) -> [String] {
        precondition(ids.count <= maxInteractionStateIds, "at most \(maxInteractionStateIds) ids")
        var unique: [String] = []
        unique.reserveCapacity(ids.count)
        withUnsafeTemporaryAllocation(of: Int8.self, capacity: 128) { slots in
            slots.initialize(repeating: -1)
            for id in ids {
                var slot = Int(truncatingIfNeeded: quickHash(id)) & 127
                while slots[slot] >= 0, unique[Int(slots[slot])] != id { slot = (slot + 1) & 127 }
                if slots[slot] < 0 {
                    slots[slot] = Int8(unique.count)
                    unique.append(id)
                }
            }
        }
        return unique
    }

    /// Length, first and last eight bytes of an id, mixed (ids are UUIDs: these bytes differ).
    private static func quickHash(_ id: String) -> UInt64 {
        var id = id
        return id.withUTF8 { b in
            let n = b.count
            var h = UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15
            guard n > 0, let base = b.baseAddress else { return h }
            let raw = UnsafeRawPointer(base)
            var head: UInt64 = 0, tail: UInt64 = 0
            withUnsafeMutableBytes(of: &head) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: min(8, n))) }
            withUnsafeMutableBytes(of: &tail) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw + max(0, n - 8), count: min(8, n))) }
            h = (h ^ head) &* 0xFF51_AFD7_ED55_8CCD
            h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            return h ^ (h >> 29)
        }
    }

    /// `maxInteractionStateIds` ids or NULLs, each with its place, then the viewer (twice).
    /// Portable SQL (SQLite and PostgreSQL): `?` placeholders, a `VALUES` list joined to `posts`
    /// by its primary key, and the viewer's like and save as LEFT JOINs on their (post, user) keys.
    /// Against `p.id IN (…)` with two correlated `EXISTS` per row, SQLite runs about a quarter
    /// fewer instructions (no ephemeral index for the IN list, no subquery per row: bench/RESULTS.md
    /// "Read paths, round 3"), and the row names its place instead of its id.
    static let statesByIdSQL = """
        WITH q(i, id) AS (VALUES \((0..<maxInteractionStateIds).map { "(\($0), ?)" }.joined(separator: ", ")))
        SELECT q.i, p.like_count, p.save_count,
               CASE WHEN l.post_id IS NULL THEN 0 ELSE 1 END,
               CASE WHEN s.post_id IS NULL THEN 0 ELSE 1 END
        FROM q JOIN posts p ON p.id = q.id
        LEFT JOIN post_likes l ON l.post_id = p.id AND l.user_id = ?
        LEFT JOIN post_saves s ON s.post_id = p.id AND s.user_id = ?
        """
}
