import TSJSON
import TSStorage

/// The ids of one interaction-state request as UTF-8 slices of one buffer: the request body
/// where its ids stand (the validation's fast reader found them there, plain strings whose bytes
/// are their values), or the ids of a parsed body laid side by side. They go to SQLite's
/// bindings and into the response from there, without a `String` each.
public struct PostIdSlices: Sendable {
    public let bytes: [UInt8]
    public let ranges: [Range<Int>]

    /// `ranges` lie within `bytes` and hold UTF-8 (checked when they are bound: `SQLTextSlices`).
    public init(bytes: [UInt8], ranges: [Range<Int>]) {
        self.bytes = bytes
        self.ranges = ranges
    }

    public init(_ ids: [String]) {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(ids.count)
        for id in ids {
            let start = bytes.count
            bytes.append(contentsOf: id.utf8)
            ranges.append(start..<bytes.count)
        }
        self.init(bytes: bytes, ranges: ranges)
    }
}

extension PostService {
    /// `POST /api/mobile/posts/interaction-state`: the like/save state of 1–50 posts for the
    /// caller, written straight into the response body (`envelope` around `InteractionStateData`;
    /// no `JSONValue` tree), read on a reader thread in the same read that checks the token's user.
    /// Duplicates are answered once, unknown ids left out, the rest in request order (as
    /// `interactionStates`). Returns the caller (for the access log) and the body.
    public func interactionStatesJSON(postIds: [String], token: VerifiedToken, envelope: JSONEnvelope) async throws
        -> (user: PublicUser, body: [UInt8]) {
        try await interactionStatesJSON(postIds: PostIdSlices(postIds), token: token, envelope: envelope)
    }

    /// As above, for ids as slices of one buffer (the request body's own bytes).
    public func interactionStatesJSON(postIds ids: PostIdSlices, token: VerifiedToken, envelope: JSONEnvelope) async throws
        -> (user: PublicUser, body: [UInt8]) {
        guard !ids.ranges.isEmpty else { throw DomainError.validation(field: "postIds", message: "must contain at least 1 id") }
        guard ids.ranges.count <= Self.maxInteractionStateIds else {
            throw DomainError.validation(field: "postIds", message: "must contain at most \(Self.maxInteractionStateIds) ids")
        }
        // Duplicates answered once, at their first place: `unique` in request order.
        let unique = Self.firstOccurrences(ids).map { ids.ranges[$0] }
        // One statement for every request size: the unused ids are NULL, which no id equals. It
        // needs only the token's user id: on PostgreSQL it travels with the token's user read,
        // one round trip for both (SQLConnection.prefetch). On SQLite the ids are bound from
        // `ids.bytes` where they are.
        let args = SQLTextSlices(bytes: ids.bytes, ranges: unique, nulls: Self.maxInteractionStateIds - unique.count,
                                 rest: [.text(token.userId)])
        // The rows are read on a reader thread into at most 50 small values; the bytes are written
        // here, after the read (about 5 KB, no tree). Writing them inside the read measured slower
        // at 64 connections on the shared 2-core machine (bench/history/2026-11.md, "Read paths without a
        // JSON tree"): the reader's job grew and the replies queued behind it.
        let (user, slots) = try await db.read { c in
            c.prefetch(Self.statesByIdSQL, args)
            let user = try AuthService.sessionUser(c, token)
            var slots = [StateSlot?](repeating: nil, count: unique.count)
            try c.forEachRow(Self.statesByIdSQL, args) { r in
                // Column 0 is the id's place in `unique`: no id read back, no lookup. The response
                // carries the request's own bytes for the id (equal to the row's). A like or a
                // save is there when its LEFT JOIN found a row (its column is not NULL).
                let i = Int(r.int(0))
                guard i >= 0, i < unique.count else { return }
                slots[i] = StateSlot(id: unique[i], isLiked: !r.isNull(3), isSaved: !r.isNull(4),
                                     likeCount: r.int(1), saveCount: r.int(2))
            }
            return (user, slots)
        }
        let found = slots.compactMap { $0 }
        var w = JSONBytesWriter(capacity: envelope.head.count + envelope.tail.count + 64 + 112 * found.count)
        w.raw(envelope.head)
        ids.bytes.withUnsafeBufferPointer { b in
            w.objectValue { InteractionStates.writeJSON(found.lazy.map { StateView(slot: $0, bytes: b) }, into: &$0) }
        }
        w.raw(envelope.tail)
        return (user, w.bytes)
    }

    /// One found post's state, its id a range of the request's id bytes.
    struct StateSlot: Sendable {
        let id: Range<Int>
        let isLiked: Bool
        let isSaved: Bool
        let likeCount: Int64
        let saveCount: Int64
    }

    /// A `StateSlot` in the shape's fields, its id read from the bytes it points into (valid
    /// while they are: inside `withUnsafeBufferPointer`).
    struct StateView: PostInteractionStateFields {
        let slot: StateSlot
        let bytes: UnsafeBufferPointer<UInt8>

        var postId: IdText { IdText(utf8: UnsafeBufferPointer(rebasing: bytes[slot.id])) }
        var isLiked: Bool { slot.isLiked }
        var isSaved: Bool { slot.isSaved }
        var likeCount: Int64 { slot.likeCount }
        var saveCount: Int64 { slot.saveCount }
    }

    /// An id's UTF-8 bytes, escaped from where they are (plain ASCII: one copy).
    struct IdText: JSONText {
        let utf8: UnsafeBufferPointer<UInt8>

        var stringValue: String { String(decoding: utf8, as: UTF8.self) }

        func writeJSONString(into out: inout JSONBytesWriter) { out.appendString(utf8: UnsafeRawBufferPointer(utf8)) }
    }

    /// `ids` without repeats, each at its first place. At most `maxInteractionStateIds` ids.
    static func firstOccurrences(_ ids: [String]) -> [String] {
        firstOccurrences(PostIdSlices(ids)).map { ids[$0] }
    }

    /// The places of `ids`' first occurrences, in order. At most `maxInteractionStateIds` ids: a
    /// table of 128 slots (indices into `ids.ranges`) keyed by a hash of each id's length and
    /// first and last eight bytes, probed linearly; equal hashes compare the whole ids. A
    /// `Set<String>` hashed every byte of every id with SipHash (about 4 % of an
    /// interaction-state request).
    static func firstOccurrences(_ ids: PostIdSlices) -> [Int] {
        precondition(ids.ranges.count <= maxInteractionStateIds, "at most \(maxInteractionStateIds) ids")
        var unique: [Int] = []
        unique.reserveCapacity(ids.ranges.count)
        ids.bytes.withUnsafeBufferPointer { b in
            withUnsafeTemporaryAllocation(of: Int8.self, capacity: 128) { slots in
                slots.initialize(repeating: -1)
                for (place, range) in ids.ranges.enumerated() {
                    let id = UnsafeBufferPointer(rebasing: b[range])
                    var slot = Int(truncatingIfNeeded: quickHash(id)) & 127
                    while slots[slot] >= 0, !UnsafeBufferPointer(rebasing: b[ids.ranges[unique[Int(slots[slot])]]]).elementsEqual(id) {
                        slot = (slot + 1) & 127
                    }
                    if slots[slot] < 0 {
                        slots[slot] = Int8(unique.count)
                        unique.append(place)
                    }
                }
            }
        }
        return unique
    }

    /// Length, first and last eight bytes of an id, mixed (ids are UUIDs: these bytes differ).
    private static func quickHash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
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

    /// `maxInteractionStateIds` ids or NULLs, each with its place, then the viewer.
    /// Portable SQL (SQLite and PostgreSQL): `?` placeholders, a `VALUES` list joined to `posts`
    /// by its primary key, and the viewer's like and save as one LEFT JOIN on their (post, user) row
    /// (Migrations/0008: one seek per found post, where two tables took two).
    /// Against `p.id IN (…)` with two correlated `EXISTS` per row, SQLite runs about a quarter
    /// fewer instructions (no ephemeral index for the IN list, no subquery per row: bench/history/2026-11.md
    /// "Read paths, round 3"), and the row names its place instead of its id. The like and the
    /// save come back as their times or NULL (a CASE around each costs more).
    static let statesByIdSQL = """
        WITH q(i, id) AS (VALUES \((0..<maxInteractionStateIds).map { "(\($0), ?)" }.joined(separator: ", ")))
        SELECT q.i, p.like_count, p.save_count, i.liked_at, i.saved_at
        FROM q JOIN posts p ON p.id = q.id
        LEFT JOIN post_interactions i ON i.post_id = p.id AND i.user_id = ?
        """
}
