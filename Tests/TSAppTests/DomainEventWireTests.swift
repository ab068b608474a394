import TSJSON
import XCTest
@testable import TSDomain

/// The JSON other nodes receive (DomainEvent+Wire.swift): every kind survives encode → bytes →
/// parse → decode unchanged, and what cannot be read is refused with a reason.
final class DomainEventWireTests: XCTestCase {
    static let user = PublicUser(id: "u1", username: "alice", firstName: "Alice", avatarUrl: nil)
    static let other = PublicUser(id: "u2", username: "bob", firstName: nil, avatarUrl: "https://x/a.png")

    static func element(reactions: ElementReactions?) -> Element {
        Element(id: "e1", roomId: "r1", type: .photo, positionX: 1.5, positionY: -2, width: 100, height: 50.25, createdBy: "u1",
                content: "caption \"quoted\" ✓", imageUrl: "https://x/i.png", audioUrl: nil, videoUrl: nil, thumbnailUrl: nil,
                duration: 3.25, createdAt: 1_700_000_000, updatedAt: 1_700_000_123, reactionCount: reactions?.count ?? 0, reactions: reactions)
    }

    static let events: [DomainEvent] = {
        let stats = ElementStats(totalReactions: 2, hasReacted: true, topReactors: [user, other])
        let reaction = Reaction(id: "x1", elementId: "e1", userId: "u2", createdAt: 1_700_000_200, user: other)
        let kinds: [DomainEventKind] = [
            .elementCreated(element(reactions: nil)),
            .elementUpdated(element(reactions: ElementReactions(count: 2, hasReacted: false, topReactors: [other, user]))),
            .elementDeleted(elementId: "e1"), .roomCleared(deleted: 7), .roomUpdated,
            .messageCreated(Message(id: "m1", roomId: "r1", userId: "u1", text: "hi\nthere", createdAt: 1_700_000_300, user: user)),
            .reactionAdded(elementId: "e1", reaction: reaction, stats: stats),
            .reactionRemoved(elementId: "e1", userId: "u2", stats: ElementStats(totalReactions: 0, hasReacted: false, topReactors: [])),
        ]
        // Half of them with the room's event number (nil: a room row gone, or an older node).
        return kinds.enumerated().map { i, k in
            DomainEvent(kind: k, roomId: "r1", actorId: "u1", originSocketId: i % 2 == 0 ? "sid\(i)" : nil, seq: i % 2 == 0 ? Int64(40 + i) : nil)
        }
    }()

    func testEveryKindRoundTripsThroughBytes() throws {
        for event in Self.events {
            let bytes = event.wireJSON.serialized()
            let back = try DomainEvent(wire: try JSONValue.parse(bytes))
            XCTAssertEqual(back, event, event.name)
        }
    }

    func testUnknownOrIncompleteEventsAreRefusedWithAReason() {
        XCTAssertThrowsError(try DomainEvent(wire: ["name": "element:exploded", "roomId": "r", "actorId": "u"])) { e in
            XCTAssertTrue("\(e)".contains("unknown event"), "\(e)")
        }
        XCTAssertThrowsError(try DomainEvent(wire: ["name": "element:created", "roomId": "r", "actorId": "u"])) { e in
            XCTAssertTrue("\(e)".contains("element"), "\(e)")
        }
        XCTAssertThrowsError(try DomainEvent(wire: ["name": "room:updated", "actorId": "u"]))
        XCTAssertThrowsError(try DomainEvent(wire: ["name": "room:updated", "roomId": "r", "actorId": "u", "seq": 0])) { e in
            XCTAssertTrue("\(e)".contains("seq"), "\(e)")
        }
    }
}
