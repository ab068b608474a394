import TSJSON

/// The domain event as JSON, for other nodes (nodes exchange the event, not
/// pre-encoded packets, so each node computes per-recipient payloads for its own sockets).
/// Lossless: every field of the event and its models, timestamps as the stored integers.
/// Format version 1 (`DomainEvent.wireVersion`); a reader refuses what it does not know. `seq`, the
/// room's event number, is an optional field of version 1: a reader that predates it ignores it,
/// and an event without it is delivered after the room's numbered events seen so far.
extension DomainEvent {
    public static let wireVersion: Int64 = 1

    public struct WireError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public var wireJSON: JSONValue {
        var o: JSONObject = ["name": .string(name), "roomId": .string(roomId), "actorId": .string(actorId),
                             "originSocketId": .optional(originSocketId)]
        if let seq { o["seq"] = .int(seq) }
        switch kind {
        case .elementCreated(let e), .elementUpdated(let e): o["element"] = Self.wire(e)
        case .elementDeleted(let id): o["elementId"] = .string(id)
        case .roomCleared(let n): o["deleted"] = .int(Int64(n))
        case .roomUpdated: break
        case .messageCreated(let m):
            o["message"] = .object(["id": .string(m.id), "roomId": .string(m.roomId), "userId": .string(m.userId), "text": .string(m.text),
                                    "createdAt": .int(m.createdAt), "user": m.user.json])
        case .reactionAdded(let elementId, let r, let stats):
            o["elementId"] = .string(elementId)
            o["reaction"] = .object(["id": .string(r.id), "elementId": .string(r.elementId), "userId": .string(r.userId),
                                     "createdAt": .int(r.createdAt), "user": r.user.json])
            o["stats"] = Self.wire(stats)
        case .reactionRemoved(let elementId, let userId, let stats):
            o["elementId"] = .string(elementId)
            o["userId"] = .string(userId)
            o["stats"] = Self.wire(stats)
        }
        return .object(o)
    }

    public init(wire v: JSONValue) throws {
        let roomId = try Self.string(v, "roomId")
        let actorId = try Self.string(v, "actorId")
        let origin = v["originSocketId"]?.stringValue
        let kind: DomainEventKind
        switch try Self.string(v, "name") {
        case "element:created": kind = .elementCreated(try Self.element(Self.field(v, "element")))
        case "element:updated": kind = .elementUpdated(try Self.element(Self.field(v, "element")))
        case "element:deleted": kind = .elementDeleted(elementId: try Self.string(v, "elementId"))
        case "room:cleared": kind = .roomCleared(deleted: Int(try Self.int(v, "deleted")))
        case "room:updated": kind = .roomUpdated
        case "message:created":
            let m = try Self.field(v, "message")
            kind = .messageCreated(Message(id: try Self.string(m, "id"), roomId: try Self.string(m, "roomId"), userId: try Self.string(m, "userId"),
                                           text: try Self.string(m, "text"), createdAt: try Self.int(m, "createdAt"),
                                           user: try Self.user(Self.field(m, "user"))))
        case "element:reaction:added":
            let r = try Self.field(v, "reaction")
            kind = .reactionAdded(elementId: try Self.string(v, "elementId"),
                                  reaction: Reaction(id: try Self.string(r, "id"), elementId: try Self.string(r, "elementId"),
                                                     userId: try Self.string(r, "userId"), createdAt: try Self.int(r, "createdAt"),
                                                     user: try Self.user(Self.field(r, "user"))),
                                  stats: try Self.stats(Self.field(v, "stats")))
        case "element:reaction:removed":
            kind = .reactionRemoved(elementId: try Self.string(v, "elementId"), userId: try Self.string(v, "userId"),
                                    stats: try Self.stats(Self.field(v, "stats")))
        case let other: throw WireError(description: "unknown event \(other)")
        }
        let seq = v["seq"]?.intValue
        if let seq, seq < 1 { throw WireError(description: "seq must be a positive integer") }
        self.init(kind: kind, roomId: roomId, actorId: actorId, originSocketId: origin, seq: seq)
    }

    private static func wire(_ e: Element) -> JSONValue {
        var o: JSONObject = [
            "id": .string(e.id), "roomId": .string(e.roomId), "type": .string(e.type.rawValue), "positionX": .double(e.positionX),
            "positionY": .double(e.positionY), "width": .double(e.width), "height": .double(e.height), "createdBy": .string(e.createdBy),
            "content": .optional(e.content), "imageUrl": .optional(e.imageUrl), "audioUrl": .optional(e.audioUrl),
            "videoUrl": .optional(e.videoUrl), "thumbnailUrl": .optional(e.thumbnailUrl), "duration": .optional(e.duration),
            "createdAt": .int(e.createdAt), "updatedAt": .int(e.updatedAt), "reactionCount": .int(e.reactionCount),
        ]
        if let r = e.reactions {
            o["reactions"] = .object(["count": .int(r.count), "hasReacted": .bool(r.hasReacted), "topReactors": .array(r.topReactors.map(\.json))])
        } else {
            o["reactions"] = .null
        }
        return .object(o)
    }

    private static func wire(_ s: ElementStats) -> JSONValue {
        .object(["totalReactions": .int(s.totalReactions), "hasReacted": .bool(s.hasReacted), "topReactors": .array(s.topReactors.map(\.json))])
    }

    private static func element(_ v: JSONValue) throws -> Element {
        guard let type = ElementType(rawValue: try string(v, "type")) else { throw WireError(description: "bad element type") }
        var reactions: ElementReactions?
        if let r = v["reactions"], !r.isNull {
            reactions = ElementReactions(count: try int(r, "count"), hasReacted: try bool(r, "hasReacted"), topReactors: try users(field(r, "topReactors")))
        }
        return Element(id: try string(v, "id"), roomId: try string(v, "roomId"), type: type, positionX: try double(v, "positionX"),
                       positionY: try double(v, "positionY"), width: try double(v, "width"), height: try double(v, "height"),
                       createdBy: try string(v, "createdBy"), content: v["content"]?.stringValue, imageUrl: v["imageUrl"]?.stringValue,
                       audioUrl: v["audioUrl"]?.stringValue, videoUrl: v["videoUrl"]?.stringValue, thumbnailUrl: v["thumbnailUrl"]?.stringValue,
                       duration: v["duration"].flatMap(number), createdAt: try int(v, "createdAt"), updatedAt: try int(v, "updatedAt"),
                       reactionCount: try int(v, "reactionCount"), reactions: reactions)
    }

    private static func stats(_ v: JSONValue) throws -> ElementStats {
        ElementStats(totalReactions: try int(v, "totalReactions"), hasReacted: try bool(v, "hasReacted"), topReactors: try users(field(v, "topReactors")))
    }

    private static func users(_ v: JSONValue) throws -> [PublicUser] {
        guard let a = v.arrayValue else { throw WireError(description: "topReactors is not an array") }
        return try a.map(user)
    }

    private static func user(_ v: JSONValue) throws -> PublicUser {
        PublicUser(id: try string(v, "id"), username: try string(v, "username"), firstName: v["firstName"]?.stringValue,
                   avatarUrl: v["avatarUrl"]?.stringValue)
    }

    private static func field(_ v: JSONValue, _ key: String) throws -> JSONValue {
        guard let f = v[key], !f.isNull else { throw WireError(description: "missing \(key)") }
        return f
    }

    private static func string(_ v: JSONValue, _ key: String) throws -> String {
        guard let s = v[key]?.stringValue else { throw WireError(description: "\(key) is not a string") }
        return s
    }

    private static func int(_ v: JSONValue, _ key: String) throws -> Int64 {
        guard let i = v[key]?.intValue else { throw WireError(description: "\(key) is not an integer") }
        return i
    }

    private static func bool(_ v: JSONValue, _ key: String) throws -> Bool {
        guard let b = v[key]?.boolValue else { throw WireError(description: "\(key) is not a boolean") }
        return b
    }

    private static func number(_ v: JSONValue) -> Double? {
        if let d = v.doubleValue { return d }
        return v.intValue.map(Double.init)
    }

    private static func double(_ v: JSONValue, _ key: String) throws -> Double {
        guard let d = v[key].flatMap(number) else { throw WireError(description: "\(key) is not a number") }
        return d
    }
}
