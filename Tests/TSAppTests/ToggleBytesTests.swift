import Foundation
import TSDomain
import TSJSON
import XCTest

/// The REST toggle answers bytes written from the result (`ToggleResult.writeJSON` into a
/// `JSONBytesWriter`, Reaction+JSONShape.swift), not a `JSONValue` tree serialized per toggle.
/// Over a real socket, these check that the bytes equal, byte for byte, the encoding of the tree
/// the route built before (`legacyToggle`, copied from the code the writer replaced) for the same
/// values: member order, escaping of odd names, `null`s (no first name or avatar, no
/// `userReaction` after a removal) and the top reactors included.
final class ToggleBytesTests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    /// The toggle's `{"data": …}` as the route built it before (verbatim shapes of `Reaction.json`,
    /// `ElementStats.json`, `PublicUser.json` and `ToggleResult.json`), from the decoded answer.
    static func legacyToggle(_ t: JSONValue) -> JSONValue {
        func user(_ u: JSONValue?) -> JSONValue {
            .object(["id": u?["id"] ?? .null, "username": u?["username"] ?? .null, "firstName": u?["firstName"] ?? .null,
                     "avatarUrl": u?["avatarUrl"] ?? .null])
        }
        let r = t["reaction"], s = t["elementStats"]
        let reaction: JSONValue = .object([
            "id": r?["id"] ?? .null, "elementId": r?["elementId"] ?? .null, "userId": r?["userId"] ?? .null, "type": "heart",
            "createdAt": r?["createdAt"] ?? .null, "user": user(r?["user"]),
        ])
        let hasReacted = s?["hasReacted"]?.boolValue ?? false
        let stats: JSONValue = .object([
            "totalReactions": s?["totalReactions"] ?? .null, "count": s?["totalReactions"] ?? .null, "hasReacted": .bool(hasReacted),
            "userReaction": hasReacted ? "heart" : .null, "topReactors": .array((s?["topReactors"]?.arrayValue ?? []).map(user)),
        ])
        return .object(["data": .object(["action": t["action"] ?? .null, "reaction": reaction, "elementStats": stats])])
    }

    func testToggleBytesEqualTheTreeEncoding() async throws {
        let names = ["Zoë \"Z\" \\ \u{01} 🦊", "</script><b>&amp;", "e\u{301} \u{2028}\u{2029}"]
        let owner = try await api.register("owner")
        var users: [TestUser] = []
        for (i, name) in names.enumerated() { users.append(try await api.register("user\(i)", firstName: name)) }
        users.append(try await api.register("nofirstname"))  // firstName and avatarUrl null
        let room = try await api.post("/api/rooms", ["memberIds": .array(users.map { .string($0.id) })], token: owner.token)
        let roomId = try room.decode(DataEnvelope<RoomDTO>.self).data.id
        let element = try await api.post("/api/rooms/\(roomId)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1,
                                                                         "content": "x"], token: owner.token)
        let elementId = try element.decode(DataEnvelope<ElementDTO>.self).data.id
        let path = "/api/rooms/\(roomId)/elements/\(elementId)/reactions/toggle"
        // Adds one by one (the top reactors grow), then the first user removes theirs.
        var seen = Set<String>()
        for u in users + [users[0]] {
            let r = try await api.post(path, token: u.token)
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
            XCTAssertEqual(r.header("Content-Type"), "application/json; charset=utf-8")
            let data = try XCTUnwrap(r.json["data"], String(decoding: r.body, as: UTF8.self))
            let expected = Self.legacyToggle(data).serialized()
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), String(decoding: expected, as: UTF8.self))
            seen.insert(data["action"]?.stringValue ?? "")
            _ = try r.decode(DataEnvelope<ToggleDTO>.self)  // and the contract model decodes it
        }
        XCTAssertEqual(seen, ["added", "removed"])
    }
}
