import TSJSON
import XCTest
@testable import TSDomain
@testable import TSRealtime
@testable import TSRoutes

/// Each server payload's declared schema (`RealtimePayload.schema`, what `/asyncapi.json`
/// publishes) and its `Encodable` encoding (what the wire carries, `wireJSON`) describe the same
/// JSON, both ways: every declared server event and every ack has samples here, each sample's
/// encoding has exactly the schema's top-level members and conforms to the whole schema (types,
/// `$ref`s into the components, no extra member anywhere). A `CodingKey` or property renamed on
/// one side fails here without a server; what a live server really sends is checked the same way
/// by TestModeTests+EventContract.
extension AsyncAPITests {
    /// Encoded samples per declared event name (a client event's are its acks'), each typed by
    /// the declaration, so a sample of the wrong payload type does not compile.
    struct PayloadSamples {
        var encoded: [String: [(type: String, json: JSONValue)]] = [:]

        mutating func ack<P, A>(_ event: RealtimeClientEvent<P, A>, _ acks: A...) {
            encoded[event.name, default: []] += acks.map { ("\(A.self)", $0.wireJSON) }
        }

        mutating func emit<P>(_ event: RealtimeServerEvent<P>, _ payloads: P...) {
            encoded[event.name, default: []] += payloads.map { ("\(P.self)", $0.wireJSON) }
        }
    }

    static var payloadSamples: PayloadSamples {
        let user = PublicUser(id: "0b6c1a52-1111-4d1e-9a51-7a0c5e1f0001", username: "alice", firstName: "Alice", avatarUrl: nil)
        let other = PublicUser(id: "0b6c1a52-1111-4d1e-9a51-7a0c5e1f0002", username: "bob", firstName: nil, avatarUrl: "https://a.test/b.png")
        let roomId = "0b6c1a52-2222-4d1e-9a51-7a0c5e1f0001"
        let elementId = "0b6c1a52-3333-4d1e-9a51-7a0c5e1f0001"
        let bare = Element(id: elementId, roomId: roomId, type: .note, positionX: 0, positionY: 0, width: 10, height: 10, createdBy: user.id,
                           content: "hi", imageUrl: nil, audioUrl: nil, videoUrl: nil, thumbnailUrl: nil, duration: nil,
                           createdAt: 1_700_000_000, updatedAt: 1_700_000_000, reactionCount: 0, reactions: nil)
        var full = bare
        full.type = .video
        full.videoUrl = "https://a.test/v.mp4"
        full.thumbnailUrl = "https://a.test/t.jpg"
        full.duration = 12.5
        full.reactionCount = 2
        full.reactions = ElementReactions(count: 2, hasReacted: true, topReactors: [user, other])
        let reaction = Reaction(id: "0b6c1a52-4444-4d1e-9a51-7a0c5e1f0001", elementId: elementId, userId: user.id, createdAt: 1_700_000_001, user: user)
        let stats = ElementStats(totalReactions: 1, hasReacted: true, topReactors: [user])
        let none = ElementStats(totalReactions: 0, hasReacted: false, topReactors: [])
        let room = Room(id: roomId, name: "Room", createdBy: user.id, createdAt: 1_700_000_000, updatedAt: 1_700_000_002, isActive: true,
                        nameSetBy: nil, nameSetByUser: nil, elementCount: 1, unseenElements: 0, unreadMessages: 2)
        var named = room
        named.nameSetBy = other.id
        named.nameSetByUser = other
        let message = Message(id: "0b6c1a52-5555-4d1e-9a51-7a0c5e1f0001", roomId: roomId, userId: user.id, text: "hello", createdAt: 1_700_000_003, user: user)

        let e = RealtimeEvents.self
        var s = PayloadSamples()
        s.ack(e.roomJoin, RoomJoinAck(roomId: roomId, elementCount: 0), RoomJoinAck(roomId: roomId, elementCount: 3))
        s.ack(e.roomLeave, RoomLeaveAck(roomId: "not-a-uuid: echoed as sent"))
        s.ack(e.elementCreate, ElementPayload(bare))
        s.ack(e.elementUpdate, ElementPayload(full))
        s.ack(e.elementDelete, ElementDeleteAck(elementId: elementId))
        s.ack(e.roomClear, RoomClearAck(roomId: roomId, deleted: 4))
        s.ack(e.reactionToggle, ToggleResult(action: .added, roomId: roomId, reaction: reaction, stats: stats, elementOwner: other.id),
              ToggleResult(action: .removed, roomId: roomId, reaction: reaction, stats: none, elementOwner: other.id))
        s.emit(e.elementsBatch, ElementsBatch(roomId: roomId, encoded: [bare.json, full.json]), ElementsBatch(roomId: roomId, encoded: []))
        s.emit(e.elementCreated, ElementPayload(bare), ElementPayload(full))
        s.emit(e.elementUpdated, ElementPayload(full.viewed(hasReacted: false)))
        s.emit(e.elementDeleted, ElementDeletedPayload(elementId: elementId, roomId: roomId))
        s.emit(e.roomCleared, RoomClearedPayload(roomId: roomId, clearedBy: user.id))
        s.emit(e.roomUpdated, RoomPayload(room: room), RoomPayload(room: named))
        s.emit(e.messageCreated, MessagePayload(message: message))
        s.emit(e.reactionAdded, ReactionAddedPayload(elementId: elementId, roomId: roomId, reaction: reaction, stats: stats))
        s.emit(e.reactionRemoved, ReactionRemovedPayload(elementId: elementId, roomId: roomId, userId: user.id, stats: none))
        s.emit(e.elementCreatedGlobal, ElementCreatedGlobalPayload(roomId: roomId, elementId: elementId, createdBy: user.id, type: .photo))
        s.emit(e.elementDeletedGlobal, ElementDeletedGlobalPayload(roomId: roomId, elementId: elementId, deletedBy: user.id))
        s.emit(e.roomClearedGlobal, RoomClearedPayload(roomId: roomId, clearedBy: other.id))
        return s
    }

    func testEveryServerPayloadEncodesExactlyItsDeclaredSchema() throws {
        let doc = AsyncAPIDocument.build(version: "test")
        let validator = JSONSchemaValidator(document: doc)
        let samples = Self.payloadSamples.encoded
        var checked = 0
        for d in Self.declared {
            guard let schema = d.direction == .serverToClient ? d.payload : d.ack else { continue }
            let what = d.direction == .serverToClient ? "\(d.name) payload" : "\(d.name) ack"
            guard let encoded = samples[d.name], !encoded.isEmpty else {
                XCTFail("no sample of the \(what): add one to AsyncAPITests.payloadSamples")
                continue
            }
            for sample in encoded {
                for p in Self.encodingMismatches(sample.json, schema: schema, validator: validator, what: "\(what) (\(sample.type))") { XCTFail(p) }
                checked += 1
            }
        }
        XCTAssertEqual(Set(samples.keys), Self.names(.serverToClient).union(Self.names(.clientToServer)), "samples of undeclared events")
        XCTAssertGreaterThanOrEqual(checked, 19)

        // The check can fail: a renamed member, a missing one and one of the wrong type are each reported.
        let cleared = try XCTUnwrap(samples["room:cleared"]?.first?.json.objectValue)
        let schema = RealtimeEvents.roomCleared.declaration.payload
        var renamed = JSONObject(cleared.pairs.map { ($0.key == "clearedBy" ? "clearer" : $0.key, $0.value) })
        XCTAssertEqual(Self.encodingMismatches(.object(renamed), schema: schema, validator: validator, what: "room:cleared payload"), [
            "room:cleared payload encodes the members [clearer, roomId] but its schema declares [clearedBy, roomId]",
            "room:cleared payload does not conform to its schema: $: missing required clearedBy; $: unexpected property clearer",
        ])
        renamed["clearer"] = nil
        XCTAssertEqual(Self.encodingMismatches(.object(renamed), schema: schema, validator: validator, what: "x").count, 2)
        var mistyped = cleared
        mistyped["clearedBy"] = 7
        XCTAssertEqual(Self.encodingMismatches(.object(mistyped), schema: schema, validator: validator, what: "x"),
                       ["x does not conform to its schema: $.clearedBy: expected string, got 7"])
    }

    /// How an encoded payload and its schema disagree: its top-level members against the
    /// schema's properties (both ways), then the whole value against the schema.
    static func encodingMismatches(_ encoded: JSONValue, schema: JSONValue, validator: JSONSchemaValidator, what: String) -> [String] {
        var out: [String] = []
        let target = schema["$ref"]?.stringValue.flatMap { resolve($0, in: validator.document) } ?? schema
        if let declared = target["properties"]?.objectValue?.keys {
            let members = encoded.objectValue?.keys ?? []
            if Set(members) != Set(declared) {
                out.append("\(what) encodes the members [\(members.sorted().joined(separator: ", "))] but its schema declares [\(declared.sorted().joined(separator: ", "))]")
            }
        }
        let problems = validator.validate(encoded, against: schema)
        if !problems.isEmpty { out.append("\(what) does not conform to its schema: \(problems.joined(separator: "; "))") }
        return out
    }
}
