import Foundation
import TouchSyncTesting
import XCTest

/// The kit's event payload models cannot drift from the server: every server → client event of
/// `/asyncapi.json` has a model and every model an event, each event is caused on a live server
/// and awaited typed (`events.next(T.self)`, which decodes the logged payload), and each decoded
/// model's fields are compared with its message's payload schema both ways (as ModelDriftTests
/// does for REST answers).
final class EventModelDriftTests: LiveServerTestCase {
    func testEveryServerEventIsAwaitedTypedAndEveryModelMatchesItsAsyncAPIMessage() async throws {
        let backend = try await makeBackend()
        try await backend.reset()
        let document = try await backend.asyncAPIDocument()
        XCTAssertEqual(document["asyncapi"]?.string, "3.0.0")
        var payloadSchemas: [String: TouchSyncJSON] = [:]  // event name -> payload schema of what the server sends
        for (_, operation) in document["operations"]?.object ?? [:] where operation["action"]?.string == "send" {
            for ref in operation["messages"]?.array ?? [] {
                let key = try XCTUnwrap(ref["$ref"]?.string?.split(separator: "/").last.map(String.init))
                let message = try XCTUnwrap(document["components"]?["messages"]?[key], "no component message \(key)")
                payloadSchemas[try XCTUnwrap(message["name"]?.string)] = message["payload"]
            }
        }
        XCTAssertEqual(payloadSchemas.count, 12)
        let modelled = Set(touchSyncEventPayloads.map { $0.event })
        for name in Set(payloadSchemas.keys).subtracting(modelled).sorted() {
            XCTFail("/asyncapi.json has the server event \(name) but the kit has no model for it: add one to Models+Events.swift")
        }
        for name in modelled.subtracting(payloadSchemas.keys).sorted() {
            XCTFail("the kit models \(name), which /asyncapi.json does not declare: renamed or removed on the server")
        }

        let world = try await backend.load(Fixtures()
            .user("alice", firstName: "Alice").user("bob")
            .room("Design Team", createdBy: "alice", members: ["bob"])
            .element("kickoff", in: "Design Team", by: "alice", type: .note, content: "Kick-off"))
        let alice = backend.client(as: world.user("alice"))
        let room = world.room("Design Team").id
        let events = try await backend.events(from: .now)

        // Every server event once: a socket's join, then alice's writes.
        let sid = try await RawPollingSocket.connect(to: backend.url, token: world.user("bob").token)
        try await RawPollingSocket.emit(to: backend.url, sid: sid, "room:join", ["roomId": room])
        let element = try await alice.elements.create(in: room, type: .note, content: "new")
        _ = try await alice.elements.update(element.id, in: room, ["content": .string("edited")])
        _ = try await alice.reactions.toggle(room: room, element: element.id)
        _ = try await alice.reactions.toggle(room: room, element: element.id)
        _ = try await alice.messages.send("hello", in: room)
        _ = try await alice.rooms.rename(room, to: "Renamed")
        _ = try await alice.elements.delete(element.id, in: room)
        _ = try await alice.elements.clear(room: room)

        // Each awaited typed, in any order.
        let batch = try await events.next(ElementsBatchEvent.self, where: { $0.roomId == room })
        XCTAssertEqual(batch.elements.map(\.content), ["Kick-off"])
        let created = try await events.next(ElementCreatedEvent.self, where: { $0.element.id == element.id })
        XCTAssertEqual(created.element.content, "new")
        let updated = try await events.next(ElementUpdatedEvent.self)
        XCTAssertEqual(updated.element.content, "edited")
        let added = try await events.next(ReactionAddedEvent.self, where: { $0.elementId == element.id })
        XCTAssertEqual(added.reaction.userId, world.user("alice").id)
        let removed = try await events.next(ReactionRemovedEvent.self)
        XCTAssertEqual(removed.stats.totalReactions, 0)
        let message = try await events.next(MessageCreatedEvent.self)
        XCTAssertEqual(message.message.text, "hello")
        let renamed = try await events.next(RoomUpdatedEvent.self)
        XCTAssertEqual(renamed.room.name, "Renamed")
        let deleted = try await events.next(ElementDeletedEvent.self)
        XCTAssertEqual(deleted.elementId, element.id)
        let cleared = try await events.next(RoomClearedEvent.self)
        XCTAssertEqual(cleared.clearedBy, world.user("alice").id)
        let createdGlobal = try await events.next(ElementCreatedGlobalEvent.self, where: { $0.elementId == element.id })
        XCTAssertEqual(createdGlobal.type, .note)
        let deletedGlobal = try await events.next(ElementDeletedGlobalEvent.self)
        let clearedGlobal = try await events.next(RoomClearedGlobalEvent.self)

        let samples: [(String, any TouchSyncEventPayload)] = [
            (ElementsBatchEvent.event, batch), (ElementCreatedEvent.event, created), (ElementUpdatedEvent.event, updated),
            (ReactionAddedEvent.event, added), (ReactionRemovedEvent.event, removed), (MessageCreatedEvent.event, message),
            (RoomUpdatedEvent.event, renamed), (ElementDeletedEvent.event, deleted), (RoomClearedEvent.event, cleared),
            (ElementCreatedGlobalEvent.event, createdGlobal), (ElementDeletedGlobalEvent.event, deletedGlobal),
            (RoomClearedGlobalEvent.event, clearedGlobal),
        ]
        XCTAssertEqual(Set(samples.map(\.0)), modelled, "every model is checked below")
        for (name, sample) in samples {
            guard let schema = payloadSchemas[name] else { continue }
            for problem in ModelDriftTests.mismatches(model: sample, schemaName: "\(name) payload", schema: schema) { XCTFail(problem) }
        }
    }

    /// A model whose field is not the server's: the event is taken and the decoding error names
    /// the field, instead of a timeout.
    func testAnEventWhosePayloadIsNotTheModelFailsNamingTheField() async throws {
        struct Misnamed: TouchSyncEventPayload {
            static let event = "element:deleted"
            let elementID: String
        }
        let backend = try await makeBackend()
        try await backend.reset()
        let world = try await backend.load(Fixtures().user("alice").room("R", createdBy: "alice")
            .element("e", in: "R", by: "alice", type: .note, content: "x"))
        let events = try await backend.events(from: .now)
        _ = try await backend.client(as: world.user("alice")).elements.delete(world.element("e").id, in: world.room("R").id)
        do {
            _ = try await events.next(Misnamed.self, timeout: 5)
            XCTFail("a payload without elementID must not decode")
        } catch let error as DecodingError {
            guard case .keyNotFound(let key, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(key.stringValue, "elementID")
        }
    }
}
