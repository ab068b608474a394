import TSJSON
import XCTest
@testable import TSDomain
@testable import TSRealtime

/// The broadcaster emits only what the catalog declares, and everything it declares: each
/// server → client event's emission rule (`RealtimeEmission`) is filed under the domain change it
/// names, every change's events leave in the order the wire has always had (room event, then its
/// global companion, in one emit), and a declared event without a rule (or a rule for an event
/// outside the declarations) fails here. What the payloads look like on the wire is checked
/// against `/asyncapi.json` by TSAppTests' `testEverySocketAckAndEveryEmittedPayloadConformsToItsAsyncAPIMessage`.
final class RealtimeEmissionTableTests: XCTestCase {
    private static let user = PublicUser(id: "u1", username: "alice", firstName: nil, avatarUrl: nil)

    private static func element(_ reactions: ElementReactions?) -> Element {
        Element(id: "e1", roomId: "r1", type: .note, positionX: 0, positionY: 0, width: 1, height: 1, createdBy: "u1",
                content: nil, imageUrl: nil, audioUrl: nil, videoUrl: nil, thumbnailUrl: nil,
                duration: nil, createdAt: 1, updatedAt: 1, reactionCount: reactions?.count ?? 0, reactions: reactions)
    }

    /// One event of each kind, with the events each must emit, in emit order.
    private static let expected: [(DomainEventKind, [String])] = {
        let stats = ElementStats(totalReactions: 1, hasReacted: true, topReactors: [user])
        return [
            (.elementCreated(element(nil)), ["element:created", "element:created:global"]),
            (.elementUpdated(element(ElementReactions(count: 1, hasReacted: true, topReactors: [user]))), ["element:updated"]),
            (.elementDeleted(elementId: "e1"), ["element:deleted", "element:deleted:global"]),
            (.roomCleared(deleted: 2), ["room:cleared", "room:cleared:global"]),
            (.roomUpdated, ["room:updated"]),
            (.messageCreated(Message(id: "m1", roomId: "r1", userId: "u1", text: "hi", createdAt: 1, user: user)), ["message:created"]),
            (.reactionAdded(elementId: "e1", reaction: Reaction(id: "x1", elementId: "e1", userId: "u1", createdAt: 1, user: user), stats: stats),
             ["element:reaction:added"]),
            (.reactionRemoved(elementId: "e1", userId: "u1", stats: stats), ["element:reaction:removed"]),
        ]
    }()

    private static func event(_ kind: DomainEventKind) -> DomainEvent {
        DomainEvent(kind: kind, roomId: "r1", actorId: "u1", originSocketId: nil, seq: 1)
    }

    func testEveryChangeHasItsOwnSlotAndReadsItsOwnValues() {
        func matches<V>(_ c: DomainChange<V>) -> (Int, (DomainEventKind) -> Bool) { (c.index, { c.values($0) != nil }) }
        let changes = [matches(DomainChanges.elementCreated), matches(DomainChanges.elementUpdated), matches(DomainChanges.elementDeleted),
                       matches(DomainChanges.roomCleared), matches(DomainChanges.roomUpdated), matches(DomainChanges.messageCreated),
                       matches(DomainChanges.reactionAdded), matches(DomainChanges.reactionRemoved)]
        XCTAssertEqual(changes.map(\.0).sorted(), Array(0..<DomainChanges.count), "one slot per change")
        XCTAssertEqual(Self.expected.count, DomainChanges.count, "one sample per kind")
        for (kind, _) in Self.expected {
            XCTAssertEqual(changes.filter { $0.1(kind) }.map(\.0), [DomainChanges.index(kind)], "\(kind)")
        }
    }

    func testEachChangeEmitsItsDeclaredEventsInWireOrderAndEveryRuleBuildsItsPayload() throws {
        let room = Room(id: "r1", name: "R", createdBy: "u1", createdAt: 1, updatedAt: 1, isActive: true, nameSetBy: nil, nameSetByUser: nil,
                        elementCount: 0, unseenElements: 0, unreadMessages: 0)
        for (kind, names) in Self.expected {
            let event = Self.event(kind)
            let rules = RealtimeEvents.emissionTable.rules(for: kind)
            XCTAssertEqual(rules.map(\.name), names, "\(event.name)")
            for rule in rules {
                switch rule.shape {
                case .room(let build), .members(let build):
                    XCTAssertNotNil(build(event), rule.name)
                case .roomPerViewer(let viewing, let build):
                    XCTAssertNotNil(viewing(event), rule.name)
                    XCTAssertNotNil(build(event, true), rule.name)
                case .roomPerMember(let build):
                    XCTAssertNotNil(build(event, room), rule.name)
                case .membersSharingRoomPayload:
                    break
                }
            }
        }
        // Without reactions an updated element is the same for every viewer.
        guard case .roomPerViewer(let viewing, _) = try XCTUnwrap(RealtimeEvents.emissionTable.rules(for: .elementUpdated(Self.element(nil))).first)?.shape
        else { return XCTFail("element:updated is per viewer") }
        XCTAssertNil(viewing(Self.event(.elementUpdated(Self.element(nil)))))
    }

    func testEveryDeclaredServerEventHasARuleAndEveryRuleIsADeclaredEvent() {
        let declared = RealtimeEvents.all.filter { $0.direction == .serverToClient }
        let ruled = RealtimeEvents.emissionTable.byChange.flatMap { $0 }
        XCTAssertEqual(Set(ruled.map(\.name)).count, ruled.count, "each event under one change")
        for d in declared {
            let rule = ruled.first { $0.name == d.name }
            if d.audience == .joiningSocket {
                XCTAssertNil(rule, "\(d.name) answers a room:join, no domain change")
            } else {
                XCTAssertEqual(rule?.isGlobal, d.audience == .members, "\(d.name) has a rule for its audience")
            }
        }
        XCTAssertEqual(Set(ruled.map(\.name)).subtracting(declared.map(\.name)), [], "rules for undeclared events")
    }
}
