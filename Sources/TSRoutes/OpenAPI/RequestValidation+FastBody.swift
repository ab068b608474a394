import TSHTTP
import TSJSON

/// A request body the validation does not need to parse into a tree and walk
/// with the schema. An operation whose request schema is exactly "an object with one member, an
/// array of `minItems`…`maxItems` strings" (interaction-state's `{"postIds":[…]}`) gets a
/// one-pass reader (`JSONPlainStringArray`) for the body such clients send: plain ASCII strings,
/// no escapes. Any body it does not take (escapes, other members or types, a count out of range,
/// invalid JSON, another media type) goes the full way (`JSONValue.parse` + `JSONSchemaCheck`),
/// so every bad input gets the same error as before. What it takes always passes that schema:
/// the shape is derived from the schema itself, and a schema with any other keyword gets no fast
/// reader.
struct FastArrayBody: Sendable {
    var method: HTTPMethod? = nil
    let member: String
    let count: ClosedRange<Int>

    /// The fast reader for `schema` (a `$ref` into `components` resolved), or nil when the schema
    /// is not exactly that shape.
    init?(schema: JSONValue, components: JSONObject) {
        var schema = schema
        if let ref = schema["$ref"]?.stringValue {
            let prefix = "#/components/schemas/"
            guard schema.objectValue?.count == 1, ref.hasPrefix(prefix), let resolved = components[String(ref.dropFirst(prefix.count))] else { return nil }
            schema = resolved
        }
        func only(_ o: JSONObject, _ allowed: Set<String>) -> Bool { o.keys.allSatisfy { allowed.contains($0) } }
        guard let object = schema.objectValue, only(object, ["type", "properties", "required", "additionalProperties", "description"]),
              object["type"] == "object", object["additionalProperties"] == .bool(false),
              let properties = object["properties"]?.objectValue, properties.count == 1, let (name, array) = properties.pairs.first.map({ ($0.key, $0.value) }),
              name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }),
              let a = array.objectValue, only(a, ["type", "items", "minItems", "maxItems", "description"]), a["type"] == "array",
              let items = a["items"]?.objectValue, only(items, ["type", "description"]), items["type"] == "string",
              let max = a["maxItems"]?.intValue else { return nil }
        if let required = object["required"] { guard required.arrayValue?.allSatisfy({ $0.stringValue == name }) == true else { return nil } }
        let min = a["minItems"]?.intValue ?? 0
        guard min >= 0, min <= max else { return nil }
        member = name
        count = Int(min)...Int(max)
    }

    /// Where the member's strings are in the body, or nil to take the full way. Only for a
    /// Content-Type the full way accepts as it is (none, or plain `application/json`), and a depth
    /// limit that allows an array inside an object.
    func ranges(_ request: HTTPRequest) -> [Range<Int>]? {
        if let type = request.header("Content-Type"), type != "application/json", type != "application/json; charset=utf-8" { return nil }
        guard request.maxJSONDepth >= 2 else { return nil }
        return JSONPlainStringArray.ranges(request.body, member: Array(member.utf8), count: count)
    }

    /// The body as the tree the full parse would give, or nil to take the full way.
    func read(_ request: HTTPRequest) -> JSONValue? {
        guard let ranges = ranges(request) else { return nil }
        let strings = request.body.withUnsafeBufferPointer { b in
            ranges.map { JSONValue.string(String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self)) }
        }
        var o = JSONObject()
        o.appendUnchecked(member, .array(strings))
        return .object(o)
    }
}

extension RequestValidation {
    /// The fast readers, by route pattern (with their method).
    static let fastBodies: [String: FastArrayBody] = {
        var map: [String: FastArrayBody] = [:]
        for op in OpenAPICatalog.operations where map[op.pattern] == nil {
            guard let schema = op.requestSchema, var fast = FastArrayBody(schema: schema, components: components) else { continue }
            fast.method = op.method
            map[op.pattern] = fast
        }
        return map
    }()

    /// Routes whose handler reads a body the fast reader took as byte ranges
    /// (`RequestContext.body` is `.plainStrings`), with no tree and no `String` per item: interaction-state's 50
    /// ids go from the body to SQLite's bindings and the response as bytes
    /// (`ReadPaths.interactionState`). Any other handler gets the tree.
    static let plainStringReaders: Set<String> = ["/api/mobile/posts/interaction-state"]

    /// The body as the full parse would give it, when a fast reader takes it (nil: parse in full).
    static func fastBody(_ request: HTTPRequest, _ op: OpenAPIOperation) -> ValidatedBody? {
        guard let fast = fastBodies[op.pattern], fast.method == op.method else { return nil }
        if plainStringReaders.contains(op.pattern) { return fast.ranges(request).map { .plainStrings($0) } }
        return fast.read(request).map { .tree($0) }
    }
}
