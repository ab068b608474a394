import Foundation
import TSJSON
import XCTest

/// Posts, like/save and interaction-state with the mobile envelope (docs/api.md, "Posts").
final class PostsAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    /// The set-up below creates 50 posts as one user in a row: more than limits.postsBurst allows.
    override var serverOverrides: [String: JSONValue] { ["limits.postsPerSecond": 0] }

    func testLikeSaveIdempotentAndInteractionState() async throws {
        let a = try await api.register("alice")
        let b = try await api.register("bob")
        var ids: [String] = []
        for i in 0..<50 {
            let r = try await api.post("/api/mobile/posts", ["content": .string("post \(i)")], token: a.token)
            XCTAssertEqual(r.status, 201)
            let env = try r.decode(MobileEnvelope<PostDTO>.self)
            XCTAssertTrue(env.success)
            ids.append(try XCTUnwrap(env.data).id)
        }
        for _ in 0..<2 {
            let like = try await api.post("/api/mobile/posts/\(ids[0])/like", token: b.token)
            XCTAssertEqual(like.status, 200)
            let s = try XCTUnwrap(like.decode(MobileEnvelope<PostInteractionState>.self).data)
            XCTAssertEqual(s.likeCount, 1, "liking twice counts once")
            XCTAssertTrue(s.isLiked)
        }
        _ = try await api.post("/api/mobile/posts/\(ids[0])/like", token: a.token)
        _ = try await api.post("/api/mobile/posts/\(ids[1])/save", token: b.token)
        let unsave = try await api.delete("/api/mobile/posts/\(ids[2])/save", token: b.token)
        XCTAssertEqual(try unsave.decode(MobileEnvelope<PostInteractionState>.self).data?.saveCount, 0, "unsaving what was never saved is a no-op")

        // Exactly 50 ids, in order.
        let r50 = try await api.post("/api/mobile/posts/interaction-state", ["postIds": .array(ids.map(JSONValue.string))], token: b.token)
        XCTAssertEqual(r50.status, 200)
        let s50 = try r50.decode(InteractionStateResponse.self)
        XCTAssertTrue(s50.success)
        XCTAssertEqual(s50.message, "Interaction states retrieved successfully")
        XCTAssertEqual(s50.data?.totalPosts, 50)
        XCTAssertEqual(s50.data?.totalLiked, 1)
        XCTAssertEqual(s50.data?.totalSaved, 1)
        XCTAssertEqual(s50.data?.interactions.map(\.postId), ids)
        let interactions = s50.data?.interactions ?? []
        XCTAssertGreaterThanOrEqual(interactions.count, 2)
        XCTAssertEqual(interactions.first?.likeCount, 2)
        XCTAssertEqual(interactions.first?.isLiked, true)
        XCTAssertEqual(interactions.dropFirst().first?.isSaved, true)

        // User isolation: Alice's view of the same posts.
        let sa = try await api.post("/api/mobile/posts/interaction-state", ["postIds": .array(ids.map(JSONValue.string))], token: a.token)
            .decode(InteractionStateResponse.self)
        XCTAssertEqual(sa.data?.totalSaved, 0)
        XCTAssertEqual(sa.data?.totalLiked, 1)

        // 51 ids → 400 in the mobile envelope.
        let r51 = try await api.post("/api/mobile/posts/interaction-state", ["postIds": .array((ids + ["x"]).map(JSONValue.string))], token: b.token)
        XCTAssertEqual(r51.status, 400)
        let e51 = try r51.decode(InteractionStateResponse.self)
        XCTAssertFalse(e51.success)
        XCTAssertEqual(e51.code, "VALIDATION_ERROR")
        XCTAssertNotNil(e51.error)
        XCTAssertNil(e51.data)

        // Unknown ids left out, duplicates answered once.
        let mixed = try await api.post("/api/mobile/posts/interaction-state",
                                       ["postIds": [.string(ids[3]), "unknown-1", .string(ids[3]), .string(ids[0])]], token: b.token)
            .decode(InteractionStateResponse.self)
        XCTAssertEqual(mixed.data?.interactions.map(\.postId), [ids[3], ids[0]])
        XCTAssertEqual(mixed.data?.totalPosts, 2)

        for bad: JSONValue in [["postIds": []], ["postIds": "x"], ["postIds": [1]], [:]] {
            let r = try await api.post("/api/mobile/posts/interaction-state", bad, token: b.token)
            XCTAssertEqual(r.status, 400, "\(bad)")
            XCTAssertEqual(try r.decode(InteractionStateResponse.self).success, false)
        }
        let unauth = try await api.post("/api/mobile/posts/interaction-state", ["postIds": ["x"]])
        XCTAssertEqual(unauth.status, 401)
        XCTAssertEqual(try unauth.decode(InteractionStateResponse.self).code, "UNAUTHORIZED")
        let missing = try await api.post("/api/mobile/posts/unknown/like", token: b.token)
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(try missing.decode(InteractionStateResponse.self).success, false)
    }
}
