import TSJSON
import XCTest
@testable import TSDomain
@testable import TSRealtime

/// The JSON each server payload sends is its `Encodable` encoding (`wireJSON`); these are the
/// bytes clients have always received (the trees the payloads used to write by hand), member
/// order, integers and `null`s included. That each payload matches its declared schema is
/// TSAppTests' AsyncAPITests+Encoding.
final class RealtimePayloadWireTests: XCTestCase {
    private static let user = PublicUser(id: "u1", username: "alice", firstName: nil, avatarUrl: "https://a.test/x.png")
    private static let stats = ElementStats(totalReactions: 2, hasReacted: false, topReactors: [user])
    private static let reaction = Reaction(id: "x1", elementId: "e1", userId: "u1", createdAt: 1_700_000_000, user: user)
    private static let element = Element(
        id: "e1", roomId: "r1", type: .photo, positionX: 1.5, positionY: -2, width: 100, height: 50, createdBy: "u1",
        content: nil, imageUrl: "https://a.test/p.jpg", audioUrl: nil, videoUrl: nil, thumbnailUrl: nil, duration: 3,
        createdAt: 1_700_000_000, updatedAt: 1_700_000_060, reactionCount: 2, reactions: ElementReactions(count: 2, hasReacted: true, topReactors: [user]))
    private static let room = Room(id: "r1", name: "R", createdBy: "u1", createdAt: 1_700_000_000, updatedAt: 1_700_000_000, isActive: true,
                                   nameSetBy: "u1", nameSetByUser: user, elementCount: 3, unseenElements: 1, unreadMessages: 0)
    private static let message = Message(id: "m1", roomId: "r1", userId: "u1", text: "hi \"there\"", createdAt: 1_700_000_000, user: user)

    private func assertWire<P: RealtimeOutbound>(_ payload: P, _ expected: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(payload.wireJSON.serializedString(), expected.serializedString(), "\(P.self)", file: file, line: line)
    }

    func testEveryServerPayloadSendsTheJSONItAlwaysSent() {
        let e = Self.element.json
        assertWire(RoomJoinAck(roomId: "r1", elementCount: 3), ["roomId": "r1", "elementCount": 3])
        assertWire(RoomLeaveAck(roomId: "anything"), ["roomId": "anything"])
        assertWire(ElementDeleteAck(elementId: "e1"), ["elementId": "e1"])
        assertWire(RoomClearAck(roomId: "r1", deleted: 0), ["roomId": "r1", "deleted": 0])
        let toggle = ToggleResult(action: .added, roomId: "r1", reaction: Self.reaction, stats: Self.stats, elementOwner: "u2")
        assertWire(toggle, ["action": "added", "reaction": Self.reaction.json, "elementStats": Self.stats.json])
        assertWire(ElementPayload(Self.element), ["element": e])
        assertWire(ElementPayload(encoded: e), ["element": e])
        assertWire(ElementsBatch(roomId: "r1", encoded: [e, e]), ["roomId": "r1", "elements": [e, e]])
        assertWire(ElementsBatch(roomId: "r1", encoded: []), ["roomId": "r1", "elements": []])
        assertWire(ElementDeletedPayload(elementId: "e1", roomId: "r1"), ["elementId": "e1", "roomId": "r1"])
        assertWire(RoomClearedPayload(roomId: "r1", clearedBy: "u1"), ["roomId": "r1", "clearedBy": "u1"])
        assertWire(RoomPayload(room: Self.room), ["room": Self.room.json])
        assertWire(MessagePayload(message: Self.message), ["message": Self.message.json])
        assertWire(ReactionAddedPayload(elementId: "e1", roomId: "r1", reaction: Self.reaction, stats: Self.stats),
                   ["elementId": "e1", "roomId": "r1", "reaction": Self.reaction.json, "stats": Self.stats.json])
        assertWire(ReactionRemovedPayload(elementId: "e1", roomId: "r1", userId: "u1", stats: Self.stats),
                   ["elementId": "e1", "roomId": "r1", "userId": "u1", "stats": Self.stats.json])
        assertWire(ElementCreatedGlobalPayload(roomId: "r1", elementId: "e1", createdBy: "u1", type: .photo),
                   ["roomId": "r1", "elementId": "e1", "createdBy": "u1", "type": "photo"])
        assertWire(ElementDeletedGlobalPayload(roomId: "r1", elementId: "e1", deletedBy: "u1"),
                   ["roomId": "r1", "elementId": "e1", "deletedBy": "u1"])
    }

    /// The models inside a payload keep their one shape: timestamps as ISO 8601 seconds, `null`
    /// for a missing value, integers as integers.
    func testModelsInsideAPayloadKeepTheirShape() throws {
        let v = ElementPayload(Self.element).wireJSON
        XCTAssertEqual(v["element"]?["createdAt"], "2023-11-14T22:13:20Z")
        XCTAssertEqual(v["element"]?["content"], .null)
        XCTAssertEqual(v["element"]?["duration"], .double(3))
        XCTAssertEqual(v["element"]?["reactions"]?["count"], .int(2))
        let r = RoomPayload(room: Self.room).wireJSON
        XCTAssertEqual(r["room"]?["elementCount"], .int(3))
        XCTAssertEqual(r["room"]?["createdAt"], "2023-11-14T22:13:20Z")
    }
}
