/// Encodes an `Encodable` value straight into a `JSONValue` tree: no bytes, no Foundation, no
/// second parse. It runs once per emitted Socket.IO event, so it stays small: one object per
/// container (the encoder, which owns its members), none per primitive member, and a
/// `JSONValueEncodable` value (a domain model with its own `json`, or a `JSONValue`) is taken as it is.
///
/// What each Swift value becomes is what Foundation's `JSONEncoder` would write, so a type's
/// wire JSON does not depend on the encoder: integers stay integers (`.int`), `Double`/`Float`
/// are `.double`, `nil` through `encodeNil` is `null` and through `encodeIfPresent` is absent,
/// and an object keeps its members in the order they were encoded (RFC 8259 §4 leaves the order
/// to the writer; the hand-written trees kept declaration order too). A key encoded twice keeps
/// its first position and takes the last value, as `JSONObject` does.
public enum JSONValueEncoder {
    /// The JSON of `value`. Throws `EncodingError.invalidValue` for an unsigned integer above
    /// `Int64.max` (JSON numbers here are `Int64` or `Double`; a `Double` would round it) and for
    /// a value that encodes nothing.
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let v = JSONValueEncoderNode.direct(value) { return v }
        let node = JSONValueEncoderNode(codingPath: [])
        try value.encode(to: node)
        guard let v = node.result() else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        return v
    }
}

/// The encoder of one value and the storage of the container it asked for. A container nested
/// in it is another node, kept in `pending` and folded in by `result()` when the whole tree is
/// done (the members' positions are reserved with `null` as they are asked for).
final class JSONValueEncoderNode: Encoder {
    enum Storage {
        case none
        case single(JSONValue)
        case object(JSONObject)
        case array([JSONValue])
    }

    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var storage: Storage = .none
    /// Nested containers and super encoders, by member key or array index.
    var pendingMembers: [(String, JSONValueEncoderNode)] = []
    var pendingItems: [(Int, JSONValueEncoderNode)] = []

    init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    /// The tree, nested containers folded in; nil if nothing was encoded.
    func result() -> JSONValue? {
        switch storage {
        case .none: return nil
        case .single(let v): return v
        case .object(var o):
            for (k, n) in pendingMembers { o[k] = n.result() ?? .object(JSONObject()) }
            return .object(o)
        case .array(var a):
            for (i, n) in pendingItems { a[i] = n.result() ?? .object(JSONObject()) }
            return .array(a)
        }
    }

    /// The value without a node of its own when it needs none: a `JSONValue`, an array of them
    /// (as the realtime payloads keep them ready-made), or a `JSONValueEncodable`. Decided on the
    /// type, not by casting the value: casting a model (larger than an existential's inline
    /// buffer) to `any JSONValueEncodable` would box a copy of it on the heap per member.
    @inline(__always)
    static func direct<T: Encodable>(_ value: T) -> JSONValue? {
        if T.self == JSONValue.self { return unsafeBitCast(value, to: JSONValue.self) }
        if T.self == [JSONValue].self { return .array(unsafeBitCast(value, to: [JSONValue].self)) }
        if let model = T.self as? any JSONValueEncodable.Type { return model.json(of: value) }
        return nil
    }

    /// The JSON of a member or item `value` at the path `path` gives (made only when a node is).
    @inline(__always)
    func box<T: Encodable>(_ value: T, _ path: () -> [any CodingKey]) throws -> JSONValue {
        if let v = Self.direct(value) { return v }
        let node = JSONValueEncoderNode(codingPath: path())
        try value.encode(to: node)
        // A nested value that asked for no container is an empty object, as in `JSONEncoder`.
        return node.result() ?? .object(JSONObject())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch storage {
        case .object: break
        case .none:
            // Room for the members of a typical payload (at most four), so they are added without regrowing.
            var o = JSONObject()
            o.reserveCapacity(4)
            storage = .object(o)
        case .single, .array: preconditionFailure("\(codingPath.map(\.stringValue)): a keyed container asked for after another kind")
        }
        return KeyedEncodingContainer(JSONValueKeyedEncoder<Key>(node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch storage {
        case .array: break
        case .none: storage = .array([])
        case .single, .object: preconditionFailure("\(codingPath.map(\.stringValue)): an unkeyed container asked for after another kind")
        }
        return JSONValueUnkeyedEncoder(node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { JSONValueSingleEncoder(node: self) }

    // The storage is changed in place (`storage` is set to `.none` while a member is added) so
    // the object's or array's buffer stays uniquely referenced and is never copied.

    func set(_ key: String, _ value: JSONValue) {
        guard case .object(var o) = storage else { preconditionFailure("not a keyed container") }
        storage = .none
        o[key] = value
        storage = .object(o)
    }

    func append(_ value: JSONValue) {
        guard case .array(var a) = storage else { preconditionFailure("not an unkeyed container") }
        storage = .none
        a.append(value)
        storage = .array(a)
    }

    var arrayCount: Int {
        if case .array(let a) = storage { return a.count }
        return 0
    }

    func path(_ key: any CodingKey) -> [any CodingKey] { codingPath + [key] }

    func nestedMember(_ key: String, path: [any CodingKey]) -> JSONValueEncoderNode {
        let child = JSONValueEncoderNode(codingPath: path)
        set(key, .null)
        pendingMembers.append((key, child))
        return child
    }

    func nestedItem() -> JSONValueEncoderNode {
        let index = arrayCount
        let child = JSONValueEncoderNode(codingPath: codingPath + [JSONIndexKey(index)])
        append(.null)
        pendingItems.append((index, child))
        return child
    }

    static func integer<I: BinaryInteger>(_ value: I, _ path: [any CodingKey]) throws -> JSONValue {
        guard let i = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) does not fit a JSON integer (Int64)"))
        }
        return .int(i)
    }
}

/// An array position as a coding key (`codingPath` of an item).
struct JSONIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { intValue.map { "Index \($0)" } ?? "" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init(intValue: Int) { self.intValue = intValue }
}

struct JSONValueKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONValueEncoderNode
    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.set(key.stringValue, .bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.set(key.stringValue, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { node.set(key.stringValue, .double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { node.set(key.stringValue, .double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.set(key.stringValue, .int(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { node.set(key.stringValue, try JSONValueEncoderNode.integer(value, node.path(key))) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { node.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { node.set(key.stringValue, try JSONValueEncoderNode.integer(value, node.path(key))) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.set(key.stringValue, try node.box(value) { node.path(key) })
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        node.nestedMember(key.stringValue, path: node.path(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        node.nestedMember(key.stringValue, path: node.path(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { node.nestedMember("super", path: node.path(JSONKey("super"))) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { node.nestedMember(key.stringValue, path: node.path(key)) }
}

struct JSONValueUnkeyedEncoder: UnkeyedEncodingContainer {
    let node: JSONValueEncoderNode
    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.arrayCount }

    mutating func encodeNil() throws { node.append(.null) }
    mutating func encode(_ value: Bool) throws { node.append(.bool(value)) }
    mutating func encode(_ value: String) throws { node.append(.string(value)) }
    mutating func encode(_ value: Double) throws { node.append(.double(value)) }
    mutating func encode(_ value: Float) throws { node.append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.append(.int(value)) }
    mutating func encode(_ value: UInt) throws { node.append(try JSONValueEncoderNode.integer(value, node.codingPath + [JSONIndexKey(count)])) }
    mutating func encode(_ value: UInt8) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.append(try JSONValueEncoderNode.integer(value, node.codingPath + [JSONIndexKey(count)])) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = count
        node.append(try node.box(value) { node.codingPath + [JSONIndexKey(index)] })
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        node.nestedItem().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { node.nestedItem().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { node.nestedItem() }
}

/// The single value of a node; encoding a second one replaces the first (`JSONEncoder` traps instead).
struct JSONValueSingleEncoder: SingleValueEncodingContainer {
    let node: JSONValueEncoderNode
    var codingPath: [any CodingKey] { node.codingPath }

    private func put(_ v: JSONValue) {
        switch node.storage {
        case .none, .single: node.storage = .single(v)
        case .object, .array: preconditionFailure("\(codingPath.map(\.stringValue)): a single value encoded into a container")
        }
    }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try JSONValueEncoderNode.integer(value, codingPath)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try JSONValueEncoderNode.integer(value, codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws { put(try node.box(value) { codingPath }) }
}
