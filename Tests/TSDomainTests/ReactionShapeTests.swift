import TSJSON
import XCTest
@testable import TSDomain

/// The toggle's answer is written twice: as response bytes by `writeJSON(into:)`
/// (Reaction+JSONShape.swift) and as the literal `.json` trees of the realtime payloads
/// (Reaction.swift). Both must give the same members in the same order, for added and removed
/// hearts, with and without top reactors, with `null`s and with text that needs escaping.
final class ReactionShapeTests: XCTestCase {
    static let users = [
        PublicUser(id: "u1", username: "zoë", firstName: "Zoë \"Z\" \\ \u{01} 🦊", avatarUrl: nil),
        PublicUser(id: "u2", username: "bob", firstName: nil, avatarUrl: "https://example.test/a?b=\"c\""),
        PublicUser(id: "u3", username: "e\u{301}", firstName: "\u{2028}", avatarUrl: "x"),
    ]

    static func results() -> [ToggleResult] {
        var out: [ToggleResult] = []
        for (action, reacted) in [(ToggleResult.Action.added, true), (.removed, false)] {
            for top in [[], Array(users.prefix(1)), users] {
                let reaction = Reaction(id: "r-\(top.count)", elementId: "e\"1", userId: users[0].id, createdAt: 1_700_000_000 + Int64(top.count),
                                        user: users[0])
                out.append(ToggleResult(action: action, roomId: "room", reaction: reaction,
                                        stats: ElementStats(totalReactions: Int64(top.count), hasReacted: reacted, topReactors: top),
                                        elementOwner: "owner"))
            }
        }
        return out
    }

    func testBytesEqualTheTreeOfEveryToggleResult() {
        for r in Self.results() {
            var bytes = JSONBytesWriter(capacity: 16)
            bytes.objectValue { r.writeJSON(bytes: &$0) }
            XCTAssertEqual(String(decoding: bytes.bytes, as: UTF8.self), r.json.serializedString())
            // The generic form into a tree gives the same tree.
            XCTAssertEqual(JSONTreeWriter.build { r.writeJSON(into: &$0) }.serializedString(), r.json.serializedString())
        }
    }
}
