/// A type whose JSON is already a `JSONValue` it builds itself (`json`), written once for every
/// path that sends it (REST bytes and trees, Socket.IO payloads). `Encodable` through that value:
/// `JSONValueEncoder` takes `json` as it is, without walking it again; any other encoder
/// (Foundation's `JSONEncoder`, a test's) gets the same tree through `JSONValue`'s `encode(to:)`.
public protocol JSONValueEncodable: Encodable {
    var json: JSONValue { get }
}

extension JSONValueEncodable {
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    /// `value`'s `json`, for a caller that knows only that `T` is `Self` (`JSONValueEncoder`,
    /// having matched the type): read in place, without boxing the value in an existential.
    static func json<T>(of value: T) -> JSONValue {
        withUnsafePointer(to: value) { $0.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.json } }
    }
}

/// A string key of any name: the members of an object whose keys are data, not a declaration.
struct JSONKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    init(_ key: String) { stringValue = key }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension JSONValue: Codable {
    /// The value through any encoder: integers as `Int64`, doubles as `Double`, objects in member order.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for v in a { try c.encode(v) }
        case .object(let o):
            var c = encoder.container(keyedBy: JSONKey.self)
            for (k, v) in o.pairs { try c.encode(v, forKey: JSONKey(k)) }
        case .null, .bool, .int, .double, .string:
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .int(let i): try c.encode(i)
            case .double(let d): try c.encode(d)
            case .string(let s): try c.encode(s)
            case .array, .object: break  // the containers above
            }
        }
    }

    /// Any JSON value from any decoder: an integer stays `.int` (RFC 8259 §6 does not tell them
    /// apart; the tree does, so an integer sent is echoed as one), any other number is `.double`.
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? JSONValueDecoding {
            self = d.value
            return
        }
        if let c = try? decoder.container(keyedBy: JSONKey.self) {
            var o = JSONObject()
            for key in c.allKeys { o[key.stringValue] = try c.decode(JSONValue.self, forKey: key) }
            self = .object(o)
        } else if var c = try? decoder.unkeyedContainer() {
            var a: [JSONValue] = []
            while !c.isAtEnd { a.append(try c.decode(JSONValue.self)) }
            self = .array(a)
        } else {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let i = try? c.decode(Int64.self) {
                self = .int(i)
            } else if let d = try? c.decode(Double.self) {
                self = .double(d)
            } else {
                self = .string(try c.decode(String.self))
            }
        }
    }
}

/// A decoder reading a `JSONValue` (`JSONValueDecoder`): `JSONValue.init(from:)` takes the
/// value it stands on as it is.
protocol JSONValueDecoding: Decoder {
    var value: JSONValue { get }
}
