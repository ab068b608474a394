import TSDomain
import TSJSON
import TSSocketIO

/// The payload of a Socket.IO event or ack: one JSON object, described by a JSON Schema whose
/// `$ref`s point into `#/components/schemas` (the objects of docs/api.md, shared with
/// `/openapi.json`). The schema is what `/asyncapi.json` publishes for it.
public protocol RealtimePayload: Sendable {
    static var schema: JSONValue { get }
}

/// A payload the server sends: its wire JSON is its `Encodable` encoding, made by
/// `JSONValueEncoder` straight into the `JSONValue` tree the hub serializes (once per emission,
/// once per variant), never through `JSONEncoder` and a reparse: it is the fan-out path.
/// Tests/TSAppTests/AsyncAPITests+Encoding checks each type's encoding against its `schema`.
public protocol RealtimeOutbound: RealtimePayload, Encodable {}

extension RealtimeOutbound {
    /// The payload as sent. `JSONValueEncoder` fails only on an unsigned integer above `Int64.max`
    /// or a type that encodes nothing; the payload types hold neither (every one is encoded by
    /// AsyncAPITests+Encoding), so a failure here is a broken payload type, stopped where it is.
    @inline(__always)
    var wireJSON: JSONValue {
        do { return try JSONValueEncoder.encode(self) } catch { preconditionFailure("\(Self.self) does not encode: \(error)") }
    }
}

/// A payload the server receives. Read with the same field checks as a REST body (`Input`), so
/// a bad field gets the same `VALIDATION_ERROR` (and the same field name) on both.
public protocol RealtimeInbound: RealtimePayload {
    init(_ input: Input) throws
}

/// Who gets a server → client event (docs/realtime.md "Server → client").
public enum RealtimeAudience: String, Sendable, CaseIterable {
    /// The sockets in the room's channel `room:<roomId>`, except the socket that caused the event.
    case room
    /// Every socket of every member of the room, through the members' channels `user:<userId>`
    /// (`realtime.globalEvents: "members"`), or every connected socket (`"all"`).
    case members
    /// The one socket whose `room:join` it answers.
    case joiningSocket
}

/// A client → server event: its name, the payload its handler receives, the ack it answers,
/// and the write limit it spends before its payload is read (limits.*, docs/limits.md).
public struct RealtimeClientEvent<Payload: RealtimeInbound, Ack: RealtimeOutbound>: Sendable {
    public let name: String
    public let summary: String
    public let limit: WriteLimits.Kind?

    init(_ name: String, limit: WriteLimits.Kind?, _ summary: String) {
        self.name = name
        self.limit = limit
        self.summary = summary
    }

    public var declaration: RealtimeEventDeclaration {
        RealtimeEventDeclaration(name: name, direction: .clientToServer, summary: summary, payload: Payload.schema, ack: Ack.schema, audience: nil)
    }
}

/// A server → client event: its name, payload type, and how it is emitted (`RealtimeEmission`:
/// the domain change that produces it, its audience, its payload built from the change).
public struct RealtimeServerEvent<Payload: RealtimeOutbound>: Sendable {
    public let name: String
    public let summary: String
    let emitted: RealtimeEmission<Payload>
    public var audience: RealtimeAudience { emitted.audience }

    init(_ name: String, _ emission: RealtimeEmission<Payload>, _ summary: String) {
        self.name = name
        emitted = emission
        self.summary = summary
    }

    /// One emission of this event to `target`.
    @inline(__always)
    func emission(_ payload: Payload, _ target: SocketIOTarget) -> SocketIOEmission {
        SocketIOEmission(name, [payload.wireJSON], target)
    }

    public var declaration: RealtimeEventDeclaration {
        RealtimeEventDeclaration(name: name, direction: .serverToClient, summary: summary, payload: Payload.schema, ack: nil, audience: audience)
    }
}

/// One event as `/asyncapi.json` and the tests read it, whatever its payload types.
public struct RealtimeEventDeclaration: Sendable {
    public enum Direction: String, Sendable { case clientToServer, serverToClient }
    public let name: String
    public let direction: Direction
    public let summary: String
    public let payload: JSONValue
    /// The ack's schema on success (client → server only); a failure is the `Error` object.
    public let ack: JSONValue?
    public let audience: RealtimeAudience?
}
