import TSJSON

// The models Socket.IO payloads carry are `Encodable` through the tree each already builds
// (`json`): their shape (member order, `null` for a missing value, ISO 8601 second-precision
// timestamps) is written once, for REST and Socket.IO alike, and `JSONValueEncoder` takes the
// tree as it is instead of encoding the model member by member a second way.

extension Room: JSONValueEncodable {}
extension Message: JSONValueEncodable {}
extension Reaction: JSONValueEncodable {}
extension ElementStats: JSONValueEncodable {}
extension ToggleResult: JSONValueEncodable {}
extension Element: JSONValueEncodable {}
extension PublicUser: JSONValueEncodable {}

/// Its raw value, as the wire has it (`"note"`, `"photo"`, …).
extension ElementType: JSONValueEncodable {
    public var json: JSONValue { .string(rawValue) }
    // Named here: `RawRepresentable` offers an `encode(to:)` of its own, as `JSONValueEncodable` does.
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
