/// Decodes a `Decodable` value from a `JSONValue` tree already parsed (a Socket.IO argument):
/// no bytes, no Foundation. What it accepts is what Foundation's `JSONDecoder` accepts from the
/// same JSON, and its errors are the standard `DecodingError`s with the path of the member, so a
/// caller can name the field: `keyNotFound` for a missing member, `valueNotFound` for `null`
/// where a value is needed, `typeMismatch` for a value of another JSON type (an integer type
/// takes a number without a fractional part that fits it, as `JSONDecoder` does).
/// A `JSONValue` member is taken as it is (`JSONValue.init(from:)`).
public enum JSONValueDecoder {
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if T.self == JSONValue.self, let v = value as? T { return v }
        return try T(from: JSONValueDecoderNode(value, codingPath: []))
    }
}

final class JSONValueDecoderNode: JSONValueDecoding {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let o) = value else { throw Self.mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(JSONValueKeyedDecoder<Key>(object: o, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let a) = value else { throw Self.mismatch([JSONValue].self, value, codingPath) }
        return JSONValueUnkeyedDecoder(array: a, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { JSONValueSingleDecoder(value: value, codingPath: codingPath) }

    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if value.isNull { return .valueNotFound(type, .init(codingPath: path, debugDescription: "null where a value is required")) }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), found \(kind(of: value))"))
    }

    static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    // The primitive reads every container shares, at `path`.

    static func bool(_ v: JSONValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let b) = v else { throw mismatch(Bool.self, v, path) }
        return b
    }

    static func string(_ v: JSONValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let s) = v else { throw mismatch(String.self, v, path) }
        return s
    }

    static func double(_ v: JSONValue, _ path: [any CodingKey]) throws -> Double {
        guard let d = v.doubleValue else { throw mismatch(Double.self, v, path) }
        return d
    }

    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ v: JSONValue, _ path: [any CodingKey]) throws -> I {
        guard let d = v.doubleValue else { throw mismatch(I.self, v, path) }
        let exact: I? = if case .int(let i) = v { I(exactly: i) } else { I(exactly: d) }
        guard let i = exact else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(v.serializedString()) does not fit \(I.self)"))
        }
        return i
    }

    static func decode<T: Decodable>(_ type: T.Type, _ v: JSONValue, _ path: [any CodingKey]) throws -> T {
        if T.self == JSONValue.self, let same = v as? T { return same }
        return try T(from: JSONValueDecoderNode(v, codingPath: path))
    }
}

struct JSONValueKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.pairs.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let v = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
        }
        return v
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONValueDecoderNode.bool(member(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONValueDecoderNode.string(member(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONValueDecoderNode.double(member(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try JSONValueDecoderNode.double(member(key), path(key))) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try JSONValueDecoderNode.integer(type, member(key), path(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try JSONValueDecoderNode.decode(type, member(key), path(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoderNode(member(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoderNode(member(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoderNode(object["super"] ?? .null, codingPath: codingPath + [JSONKey("super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { JSONValueDecoderNode(object[key.stringValue] ?? .null, codingPath: path(key)) }
}

struct JSONValueUnkeyedDecoder: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    /// The next item and its path; the index moves only once the item is read without error.
    private func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
        let path = codingPath + [JSONIndexKey(currentIndex)]
        guard !isAtEnd else { throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "the array has no more items")) }
        return (array[currentIndex], path)
    }

    private mutating func read<T>(_ type: Any.Type, _ body: (JSONValue, [any CodingKey]) throws -> T) throws -> T {
        let (v, path) = try next(type)
        let out = try body(v, path)
        currentIndex += 1
        return out
    }

    mutating func decodeNil() throws -> Bool {
        let (v, _) = try next(Never.self)
        if v.isNull { currentIndex += 1 }
        return v.isNull
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(type, JSONValueDecoderNode.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try read(type, JSONValueDecoderNode.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(type, JSONValueDecoderNode.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try read(Double.self, JSONValueDecoderNode.double)) }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(type) { try JSONValueDecoderNode.integer(type, $0, $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try read(type) { try JSONValueDecoderNode.decode(type, $0, $1) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try read(KeyedDecodingContainer<NestedKey>.self) { try JSONValueDecoderNode($0, codingPath: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try read([JSONValue].self) { try JSONValueDecoderNode($0, codingPath: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try read(JSONValue.self) { JSONValueDecoderNode($0, codingPath: $1) } }
}

struct JSONValueSingleDecoder: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoderNode.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try JSONValueDecoderNode.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try JSONValueDecoderNode.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try JSONValueDecoderNode.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoderNode.integer(type, value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONValueDecoderNode.decode(type, value, codingPath) }
}
