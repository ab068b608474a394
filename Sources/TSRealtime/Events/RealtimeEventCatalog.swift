import TSContract
import TSDomain
import TSJSON

/// Every Socket.IO event of the default namespace, declared once (docs/realtime.md): the
/// handlers are registered from the client → server declarations (`RealtimeHandlers`), the
/// broadcaster runs the server → client ones' emission rules (`RealtimeBroadcaster+Emission.swift`,
/// checked by Tests/TSRealtimeTests/RealtimeEmissionTableTests), and `/asyncapi.json`
/// is generated from `all` (`AsyncAPIDocument`). Tests/TSAppTests/AsyncAPITests checks this list
/// against the handlers the hub has and docs/api.md's tables, AsyncAPITests+Encoding each payload
/// type's encoding against its schema, TestModeTests+EventContract against every ack and payload
/// actually sent, TouchSyncTestingTests/EventModelDriftTests against the kit.
public enum RealtimeEvents {
    // MARK: client → server

    public static let roomJoin = RealtimeClientEvent<RoomRequest, RoomJoinAck>(
        "room:join", limit: .readMarker,
        "Join the room's broadcasts (member check) and mark its elements seen; elements:batch goes to this socket before the ack.")
    public static let roomLeave = RealtimeClientEvent<RoomRequest, RoomLeaveAck>(
        "room:leave", limit: nil, "Leave the room's broadcasts (the membership is unchanged).")
    public static let elementCreate = RealtimeClientEvent<ElementCreateRequest, ElementPayload>(
        "element:create", limit: .elementWrite, "Create an element, as POST /api/rooms/:roomId/elements; broadcasts element:created and element:created:global.")
    public static let elementUpdate = RealtimeClientEvent<ElementUpdateRequest, ElementPayload>(
        "element:update", limit: .elementWrite, "Update an element, as PATCH /api/rooms/:roomId/elements/:elementId; broadcasts element:updated.")
    public static let elementDelete = RealtimeClientEvent<ElementDeleteRequest, ElementDeleteAck>(
        "element:delete", limit: .elementWrite, "Delete an element; broadcasts element:deleted and element:deleted:global.")
    public static let roomClear = RealtimeClientEvent<RoomRequest, RoomClearAck>(
        "room:clear", limit: .elementWrite, "Delete every element of the room; broadcasts room:cleared and room:cleared:global.")
    public static let reactionToggle = RealtimeClientEvent<ElementRequest, ToggleResult>(
        "element:reaction:toggle", limit: .reactionToggle,
        "Toggle the caller's heart, as the REST toggle (the ack is its data); broadcasts element:reaction:added or element:reaction:removed.")

    // MARK: server → client
    // Each with the domain change that produces it, its audience and its payload built from the
    // change (`RealtimeEmission`); the broadcaster runs these rules and writes no event itself.

    public static let elementsBatch = RealtimeServerEvent<ElementsBatch>(
        "elements:batch", .joiningSocket, "The room's elements, to the socket that sent room:join, before its ack.")
    public static let elementCreated = RealtimeServerEvent<ElementPayload>(
        "element:created", .room(on: DomainChanges.elementCreated) { _, element in ElementPayload(element) },
        "An element was created (REST or socket).")
    public static let elementUpdated = RealtimeServerEvent<ElementPayload>(
        "element:updated",
        // Per viewer when the element has reactions; without, one payload for all.
        .roomPerViewer(on: DomainChanges.elementUpdated, viewing: { element in
            element.reactions.map { (element.id, $0.hasReacted) }
        }) { _, element, reacted in ElementPayload(element.viewed(hasReacted: reacted)) },
        "An element was updated; reactions.hasReacted is the recipient's.")
    public static let elementDeleted = RealtimeServerEvent<ElementDeletedPayload>(
        "element:deleted", .room(on: DomainChanges.elementDeleted) { e, elementId in ElementDeletedPayload(elementId: elementId, roomId: e.roomId) },
        "An element was deleted.")
    public static let roomCleared = RealtimeServerEvent<RoomClearedPayload>(
        "room:cleared", .room(on: DomainChanges.roomCleared) { e, _ in RoomClearedPayload(roomId: e.roomId, clearedBy: e.actorId) },
        "Every element of the room was deleted.")
    public static let roomUpdated = RealtimeServerEvent<RoomPayload>(
        "room:updated", .roomPerMember(on: DomainChanges.roomUpdated) { _, _, room in RoomPayload(room: room) },
        "The room was renamed; its badges are the recipient's.")
    public static let messageCreated = RealtimeServerEvent<MessagePayload>(
        "message:created", .room(on: DomainChanges.messageCreated) { _, message in MessagePayload(message: message) },
        "A message was sent.")
    public static let reactionAdded = RealtimeServerEvent<ReactionAddedPayload>(
        "element:reaction:added",
        .roomPerViewer(on: DomainChanges.reactionAdded, viewing: { ($0.elementId, true) }) { e, change, reacted in
            ReactionAddedPayload(elementId: change.elementId, roomId: e.roomId, reaction: change.reaction, stats: change.stats.viewed(hasReacted: reacted))
        },
        "A toggle added a heart; stats are the recipient's.")
    public static let reactionRemoved = RealtimeServerEvent<ReactionRemovedPayload>(
        "element:reaction:removed",
        .roomPerViewer(on: DomainChanges.reactionRemoved, viewing: { ($0.elementId, false) }) { e, change, reacted in
            ReactionRemovedPayload(elementId: change.elementId, roomId: e.roomId, userId: change.userId, stats: change.stats.viewed(hasReacted: reacted))
        },
        "A toggle removed a heart; stats are the recipient's.")
    public static let elementCreatedGlobal = RealtimeServerEvent<ElementCreatedGlobalPayload>(
        "element:created:global",
        .members(on: DomainChanges.elementCreated) { e, element in
            ElementCreatedGlobalPayload(roomId: e.roomId, elementId: element.id, createdBy: element.createdBy, type: element.type)
        },
        "An element was created (keeps a MyRooms screen's counts live without joining).")
    public static let elementDeletedGlobal = RealtimeServerEvent<ElementDeletedGlobalPayload>(
        "element:deleted:global",
        .members(on: DomainChanges.elementDeleted) { e, elementId in ElementDeletedGlobalPayload(roomId: e.roomId, elementId: elementId, deletedBy: e.actorId) },
        "An element was deleted.")
    public static let roomClearedGlobal = RealtimeServerEvent<RoomClearedPayload>(
        "room:cleared:global", .members(sameAs: roomCleared), "Every element of the room was deleted.")

    /// Every server → client event, in the order of docs/api.md: the AsyncAPI document's and the
    /// broadcaster's (`RealtimeEmissionTable`) one list.
    static let serverEvents: [AnyRealtimeServerEvent] = [
        AnyRealtimeServerEvent(elementsBatch), AnyRealtimeServerEvent(elementCreated), AnyRealtimeServerEvent(elementUpdated),
        AnyRealtimeServerEvent(elementDeleted), AnyRealtimeServerEvent(roomCleared), AnyRealtimeServerEvent(roomUpdated),
        AnyRealtimeServerEvent(messageCreated), AnyRealtimeServerEvent(reactionAdded), AnyRealtimeServerEvent(reactionRemoved),
        AnyRealtimeServerEvent(elementCreatedGlobal), AnyRealtimeServerEvent(elementDeletedGlobal), AnyRealtimeServerEvent(roomClearedGlobal),
    ]

    /// The emission rules of `serverEvents` per domain change, built once.
    static let emissionTable = RealtimeEmissionTable(serverEvents)

    /// Every declaration, client → server first, in the order of docs/api.md.
    public static let all: [RealtimeEventDeclaration] = [
        roomJoin.declaration, roomLeave.declaration, elementCreate.declaration, elementUpdate.declaration,
        elementDelete.declaration, roomClear.declaration, reactionToggle.declaration,
    ] + serverEvents.map(\.declaration)
}

private typealias S = OpenAPISchema

/// The id of a room or element in a socket payload: what `Input.string(_, maxLength: 64)` accepts.
private let inboundId = S.string(min: 1, max: 64)

// MARK: client → server payloads
// Open objects: a field a socket event does not use is ignored (docs/api.md "Socket.IO").
// Each is `Decodable` (read by `RealtimeInbound.decode`), its members in the order the handlers
// always read them, so the first bad one is reported, with the REST checks' field and message.

/// `{roomId}`.
public struct RoomRequest: RealtimeInbound {
    @InboundID public var roomId: String
    public static var schema: JSONValue { S.object([("roomId", inboundId)], open: true) }
    public static var example: JSONValue { ["roomId": .string(DomainExamples.roomId)] }
}

/// `{roomId, elementId}`.
public struct ElementRequest: RealtimeInbound {
    @InboundID public var roomId: String
    @InboundID public var elementId: String
    public static var schema: JSONValue { S.object([("roomId", inboundId), ("elementId", inboundId)], open: true) }
    public static var example: JSONValue { ["roomId": .string(DomainExamples.roomId), "elementId": .string(DomainExamples.elementId)] }
}

/// `{roomId}` + the fields of `CreateElementRequest`, checked by `ElementService.create`.
public struct ElementCreateRequest: RealtimeInbound {
    @InboundID public var roomId: String
    /// The whole payload, as the REST body the service reads.
    public let fields: Input

    enum CodingKeys: String, CodingKey { case roomId }

    public init(from decoder: any Decoder) throws {
        _roomId = try decoder.container(keyedBy: CodingKeys.self).decode(InboundID.self, forKey: .roomId)
        fields = try Input(value: JSONValue(from: decoder))
    }

    public static var schema: JSONValue {
        S.object([("roomId", inboundId)] + ElementSchema.mutableProperties, optional: ElementSchema.optional, open: true)
    }
    public static var example: JSONValue {
        ["roomId": .string(DomainExamples.roomId), "type": "note", "positionX": 120.5, "positionY": 340, "width": 200, "height": 150,
         "content": "Dinner at 8?"]
    }
}

/// `{roomId, elementId}` + any fields of `UpdateElementRequest`, checked by `ElementService.update`.
public struct ElementUpdateRequest: RealtimeInbound {
    @InboundID public var roomId: String
    @InboundID public var elementId: String
    /// The payload without `roomId` and `elementId`.
    public let changes: Input

    enum CodingKeys: String, CodingKey { case roomId, elementId }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        _roomId = try c.decode(InboundID.self, forKey: .roomId)
        _elementId = try c.decode(InboundID.self, forKey: .elementId)
        let all = try Input(value: JSONValue(from: decoder)).object
        changes = Input(JSONObject(all.pairs.filter { $0.key != "roomId" && $0.key != "elementId" }.map { ($0.key, $0.value) }))
    }

    public static var schema: JSONValue {
        S.object([("roomId", inboundId), ("elementId", inboundId)] + ElementSchema.mutableProperties,
                 optional: Set(ElementSchema.mutableProperties.map(\.0)), open: true)
    }
    /// A move: only the members that change.
    public static var example: JSONValue {
        ["roomId": .string(DomainExamples.roomId), "elementId": .string(DomainExamples.elementId), "positionX": 180, "positionY": 410.5]
    }
}

/// `{roomId, elementId}`, the element's id read first.
public struct ElementDeleteRequest: RealtimeInbound {
    @InboundID public var elementId: String
    @InboundID public var roomId: String
    public static var schema: JSONValue { S.object([("roomId", inboundId), ("elementId", inboundId)], open: true) }
    public static var example: JSONValue { ElementRequest.example }
}

// MARK: acks
// The server's payloads (acks and server → client events) are sent as their synthesized
// `Encodable` encoding (`RealtimeOutbound.wireJSON`): members named as the properties, in
// declaration order; a model member (`Room`, `Reaction`, …) as its own `json`. Each `schema`
// describes that encoding; AsyncAPITests+Encoding checks the two against each other, both ways.

/// `room:join`'s ack.
public struct RoomJoinAck: RealtimeOutbound {
    public let roomId: String
    public let elementCount: Int
    public static var schema: JSONValue { S.object([("roomId", S.id), ("elementCount", S.describe(S.integer, "Elements in elements:batch."))]) }
    public static var example: Self { RoomJoinAck(roomId: DomainExamples.roomId, elementCount: 12) }
}

/// `room:leave`'s ack: the room id as sent.
public struct RoomLeaveAck: RealtimeOutbound {
    public let roomId: String
    public static var schema: JSONValue { S.object([("roomId", S.string)]) }
    public static var example: Self { RoomLeaveAck(roomId: DomainExamples.roomId) }
}

/// `element:delete`'s ack.
public struct ElementDeleteAck: RealtimeOutbound {
    public let elementId: String
    public static var schema: JSONValue { S.object([("elementId", S.id)]) }
    public static var example: Self { ElementDeleteAck(elementId: DomainExamples.elementId) }
}

/// `room:clear`'s ack.
public struct RoomClearAck: RealtimeOutbound {
    public let roomId: String
    public let deleted: Int
    public static var schema: JSONValue { S.object([("roomId", S.id), ("deleted", S.describe(S.integer, "Elements deleted."))]) }
    public static var example: Self { RoomClearAck(roomId: DomainExamples.roomId, deleted: 12) }
}

/// `element:reaction:toggle`'s ack: the REST toggle's `data`.
extension ToggleResult: RealtimeOutbound {
    public static var schema: JSONValue { S.ref("ToggleResult") }
    public static var example: Self { DomainExamples.toggle }
}

// MARK: server → client payloads

/// `{element}`: `element:created`, `element:updated`, and the ack of `element:create` / `element:update`.
public struct ElementPayload: RealtimeOutbound {
    /// `Element.json` (one element's JSON is built once, however many events carry it).
    let element: JSONValue
    public init(_ element: Element) { self.element = element.json }
    init(encoded element: JSONValue) { self.element = element }
    public static var schema: JSONValue { S.object([("element", S.ref("Element"))]) }
    public static var example: Self { ElementPayload(DomainExamples.element) }
}

/// `elements:batch`.
public struct ElementsBatch: RealtimeOutbound {
    public let roomId: String
    /// `Element.json` of each element (shared with the legacy `element:created` per element).
    let elements: [JSONValue]
    init(roomId: String, encoded elements: [JSONValue]) {
        self.roomId = roomId
        self.elements = elements
    }
    public static var schema: JSONValue { S.object([("roomId", S.id), ("elements", S.array(S.ref("Element")))]) }
    public static var example: Self { ElementsBatch(roomId: DomainExamples.roomId, encoded: [DomainExamples.element.json]) }
}

/// `element:deleted`.
public struct ElementDeletedPayload: RealtimeOutbound {
    public let elementId: String
    public let roomId: String
    public static var schema: JSONValue { S.object([("elementId", S.id), ("roomId", S.id)]) }
    public static var example: Self { ElementDeletedPayload(elementId: DomainExamples.elementId, roomId: DomainExamples.roomId) }
}

/// `room:cleared` and `room:cleared:global`.
public struct RoomClearedPayload: RealtimeOutbound {
    public let roomId: String
    public let clearedBy: String
    public static var schema: JSONValue { S.object([("roomId", S.id), ("clearedBy", S.id)]) }
    public static var example: Self { RoomClearedPayload(roomId: DomainExamples.roomId, clearedBy: DomainExamples.alice.id) }
}

/// `room:updated`: the room as its recipient sees it.
public struct RoomPayload: RealtimeOutbound {
    public let room: Room
    public static var schema: JSONValue { S.object([("room", S.ref("Room"))]) }
    public static var example: Self { RoomPayload(room: DomainExamples.room) }
}

/// `message:created`.
public struct MessagePayload: RealtimeOutbound {
    public let message: Message
    public static var schema: JSONValue { S.object([("message", S.ref("Message"))]) }
    public static var example: Self { MessagePayload(message: DomainExamples.message) }
}

/// `element:reaction:added`: `stats` as the recipient sees them.
public struct ReactionAddedPayload: RealtimeOutbound {
    public let elementId: String
    public let roomId: String
    public let reaction: Reaction
    public let stats: ElementStats
    public static var schema: JSONValue {
        S.object([("elementId", S.id), ("roomId", S.id), ("reaction", S.ref("Reaction")), ("stats", S.ref("ElementStats"))])
    }
    public static var example: Self {
        ReactionAddedPayload(elementId: DomainExamples.elementId, roomId: DomainExamples.roomId, reaction: DomainExamples.reaction, stats: DomainExamples.stats)
    }
}

/// `element:reaction:removed`: `stats` as the recipient sees them.
public struct ReactionRemovedPayload: RealtimeOutbound {
    public let elementId: String
    public let roomId: String
    public let userId: String
    public let stats: ElementStats
    public static var schema: JSONValue {
        S.object([("elementId", S.id), ("roomId", S.id), ("userId", S.describe(S.id, "Whose heart was removed.")), ("stats", S.ref("ElementStats"))])
    }
    /// Bob took his heart back; the stats as another member sees them.
    public static var example: Self {
        ReactionRemovedPayload(elementId: DomainExamples.elementId, roomId: DomainExamples.roomId, userId: DomainExamples.bob.id,
                               stats: DomainExamples.noStats)
    }
}

/// `element:created:global`.
public struct ElementCreatedGlobalPayload: RealtimeOutbound {
    public let roomId: String
    public let elementId: String
    public let createdBy: String
    public let type: ElementType
    public static var schema: JSONValue {
        S.object([("roomId", S.id), ("elementId", S.id), ("createdBy", S.id), ("type", S.ref("ElementType"))])
    }
    public static var example: Self {
        ElementCreatedGlobalPayload(roomId: DomainExamples.roomId, elementId: DomainExamples.elementId, createdBy: DomainExamples.alice.id, type: .note)
    }
}

/// `element:deleted:global`.
public struct ElementDeletedGlobalPayload: RealtimeOutbound {
    public let roomId: String
    public let elementId: String
    public let deletedBy: String
    public static var schema: JSONValue { S.object([("roomId", S.id), ("elementId", S.id), ("deletedBy", S.id)]) }
    public static var example: Self {
        ElementDeletedGlobalPayload(roomId: DomainExamples.roomId, elementId: DomainExamples.elementId, deletedBy: DomainExamples.alice.id)
    }
}
