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
/// `example` is one realistic value, declared beside the type: `/asyncapi.json` publishes its
/// encoding as the message's example, and Tests/TSAppTests/AsyncAPITests+Encoding checks that
/// encoding against `schema`, both ways, for every declared event and ack.
public protocol RealtimeOutbound: RealtimePayload, Encodable {
    static var example: Self { get }
}

extension RealtimeOutbound {
    /// The payload as sent. `JSONValueEncoder` fails only on an unsigned integer above `Int64.max`
    /// or a type that encodes nothing; the payload types hold neither (every one is encoded by
    /// AsyncAPITests+Encoding), so a failure here is a broken payload type, stopped where it is.
    @inline(__always)
    var wireJSON: JSONValue {
        do { return try JSONValueEncoder.encode(self) } catch { preconditionFailure("\(Self.self) does not encode: \(error)") }
    }
}

/// A payload the server receives: `Decodable`, read by `JSONValueDecoder` from the event's
/// argument as parsed. A bad field is the `VALIDATION_ERROR` a REST body's would be (the checks
/// of `Input`: the same field name and message), so a client reads one refusal on both wires.
/// `example` is one realistic argument as a client sends it (these types are read, never
/// written, so it is the JSON rather than a value): `/asyncapi.json` publishes it, and
/// AsyncAPITests+Encoding checks that it conforms to `schema` and decodes.
public protocol RealtimeInbound: RealtimePayload, Decodable {
    static var example: JSONValue { get }
}

extension RealtimeInbound {
    /// The payload in `value`, or the `VALIDATION_ERROR` of its first bad member.
    static func decode(_ value: JSONValue) throws -> Self {
        do {
            return try JSONValueDecoder.decode(Self.self, from: value)
        } catch let e as DecodingError {
            throw DomainError(decoding: e)
        }
    }
}

extension DomainError {
    /// A decoding failure as `Input` reports the same fault: the member's name (a nested one's
    /// path joined by `.`) and `is required` (missing or `null`), `must be a string` (or the JSON
    /// type expected), or what a check said (`InboundID`'s, in the context's description).
    init(decoding error: DecodingError) {
        func field(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "payload" : path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let c):
            self = .validation(field: field(c.codingPath + [key]), message: "is required")
        case .valueNotFound(_, let c):
            self = .validation(field: field(c.codingPath), message: "is required")
        case .typeMismatch(let type, let c):
            let expected = switch type {
            case is String.Type: "a string"
            case is Bool.Type: "a boolean"
            case is any BinaryInteger.Type: "an integer"
            case is any FloatingPoint.Type: "a number"
            case is [JSONValue].Type: "an array"
            default: "an object"
            }
            self = .validation(field: field(c.codingPath), message: "must be \(expected)")
        case .dataCorrupted(let c):
            self = .validation(field: field(c.codingPath), message: c.debugDescription)
        @unknown default:
            self = .validation(field: "payload", message: "is not valid")
        }
    }
}

/// The id of a room or element in a client payload, checked as `Input.string(_, maxLength: 64)`
/// checks it: a non-empty string of at most 64 code points (the schema's `inboundId`).
@propertyWrapper
public struct InboundID: Decodable, Sendable {
    public let wrappedValue: String

    public init(wrappedValue: String) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        if s.isEmpty { throw DecodingError.dataCorruptedError(in: c, debugDescription: "must not be empty") }
        if s.unicodeScalars.count > 64 { throw DecodingError.dataCorruptedError(in: c, debugDescription: "must be at most 64 characters") }
        wrappedValue = s
    }
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
        RealtimeEventDeclaration(name: name, direction: .clientToServer, summary: summary, payload: Payload.schema, ack: Ack.schema, audience: nil,
                                 payloadExample: Payload.example, ackExample: Ack.example.wireJSON,
                                 decodesExample: { _ = try Payload.decode(Payload.example) })
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
        RealtimeEventDeclaration(name: name, direction: .serverToClient, summary: summary, payload: Payload.schema, ack: nil, audience: audience,
                                 payloadExample: Payload.example.wireJSON, ackExample: nil, decodesExample: nil)
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
    /// The payload type's `example` as sent on the wire (`/asyncapi.json`'s message example).
    public let payloadExample: JSONValue
    /// The ack type's `example`, encoded (client → server only).
    public let ackExample: JSONValue?
    /// Reads `payloadExample` as the handler would (client → server only): throws the
    /// `VALIDATION_ERROR` a client would get if the example were sent.
    public let decodesExample: (@Sendable () throws -> Void)?
}
