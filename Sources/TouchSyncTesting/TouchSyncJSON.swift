import Foundation

/// Any JSON value: the payloads of realtime events and answers that have no fixed shape.
public enum TouchSyncJSON: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([TouchSyncJSON])
    case object([String: TouchSyncJSON])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([TouchSyncJSON].self) { self = .array(a) }
        else { self = .object(try c.decode([String: TouchSyncJSON].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The member `key` of an object (nil otherwise).
    public subscript(key: String) -> TouchSyncJSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var number: Double? { if case .number(let n) = self { return n } else { return nil } }
    public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var array: [TouchSyncJSON]? { if case .array(let a) = self { return a } else { return nil } }
    public var object: [String: TouchSyncJSON]? { if case .object(let o) = self { return o } else { return nil } }
    public var isNull: Bool { self == .null }

    /// This value decoded as `T` (e.g. an event's `payload["reaction"]` as `Reaction`), with the
    /// server's date format.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try HTTPTransport.Response.decoder().decode(T.self, from: JSONEncoder().encode(self))
    }
}
