/// A JSON value (RFC 8259). Integers and doubles are kept apart so that an integer sent by a
/// client is echoed back as an integer, and object keys keep their order.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The value as an integer: an `.int`, or a `.double` with no fractional part that fits.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.isFinite && d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// The value as a double: a `.double` or an `.int`.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }

    /// Member lookup on an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Element lookup on an array; nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    /// `.string(s)` or `.null` for nil: a field without a value is `null`, never omitted (contract §0).
    public static func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    public static func optional(_ d: Double?) -> JSONValue { d.map(JSONValue.double) ?? .null }
    public static func optional(_ i: Int64?) -> JSONValue { i.map(JSONValue.int) ?? .null }
    public static func optional(_ v: JSONValue?) -> JSONValue { v ?? .null }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}

extension JSONValue {
    /// About how many bytes the value serializes to (exact for ASCII strings without escapes),
    /// computed by a walk that allocates nothing: for memory bounds on stored payloads.
    public var approximateByteCount: Int {
        switch self {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .int: return 8
        case .double: return 12
        case .string(let s): return s.utf8.count + 2
        case .array(let a): return a.reduce(2 + max(0, a.count - 1)) { $0 + $1.approximateByteCount }
        case .object(let o): return o.pairs.reduce(2 + max(0, o.count - 1)) { $0 + $1.key.utf8.count + 3 + $1.value.approximateByteCount }
        }
    }
}
