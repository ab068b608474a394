import TSJSON

/// Builders for the JSON Schema 2020-12 subset the OpenAPI 3.1 document uses. Objects list
/// every property as required unless told otherwise (a field without a value is
/// `null`, never omitted) and forbid unknown properties, so a schema is an exact description.
public enum OpenAPISchema {
    public static let string: JSONValue = ["type": "string"]
    public static let integer: JSONValue = ["type": "integer"]
    public static let number: JSONValue = ["type": "number"]
    public static let boolean: JSONValue = ["type": "boolean"]
    public static let id: JSONValue = ["type": "string", "format": "uuid", "description": "Server-generated lowercase UUID."]
    public static let dateTime: JSONValue = ["type": "string", "format": "date-time", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$",
                                      "description": "ISO 8601 UTC, second precision (no fractional seconds)."]

    /// A string of `min`...`max` Unicode code points (JSON Schema `minLength`/`maxLength`).
    public static func string(min: Int = 0, max: Int) -> JSONValue {
        var o: JSONObject = ["type": "string"]
        if min > 0 { o["minLength"] = .int(Int64(min)) }
        o["maxLength"] = .int(Int64(max))
        return .object(o)
    }

    /// A string with at least one non-whitespace character, at most `max` code points.
    public static func notBlank(max: Int) -> JSONValue {
        ["type": "string", "minLength": 1, "maxLength": .int(Int64(max)), "pattern": "\\S", "x-patternMessage": "must not be blank"]
    }

    /// A number within `range`.
    public static func range(_ range: ClosedRange<Double>) -> JSONValue {
        func n(_ d: Double) -> JSONValue { d.rounded() == d && abs(d) < 1e15 ? .int(Int64(d)) : .double(d) }
        return ["type": "number", "minimum": n(range.lowerBound), "maximum": n(range.upperBound)]
    }

    /// Usernames (AuthService.validateUsername).
    public static let username: JSONValue = ["type": "string", "minLength": 3, "maxLength": 32, "pattern": "^[a-z0-9_.]{3,32}$",
                                      "x-patternMessage": "may contain only a-z, 0-9, '_' and '.'"]

    public static func ref(_ name: String) -> JSONValue { .object(["$ref": .string("#/components/schemas/\(name)")]) }

    /// `schema` or `null` (3.1 style: a type list for primitives, `anyOf` for references).
    public static func nullable(_ schema: JSONValue) -> JSONValue {
        guard let o = schema.objectValue else { return schema }
        if let t = o["type"]?.stringValue {
            var copy = o
            copy["type"] = .array([.string(t), "null"])
            if let e = o["enum"]?.arrayValue { copy["enum"] = .array(e + [.null]) }
            return .object(copy)
        }
        return .object(["anyOf": .array([schema, ["type": "null"]])])
    }

    public static func array(_ items: JSONValue, maxItems: Int? = nil) -> JSONValue {
        var o: JSONObject = ["type": "array", "items": items]
        if let maxItems { o["maxItems"] = .int(Int64(maxItems)) }
        return .object(o)
    }

    public static func enumeration(_ values: [String]) -> JSONValue {
        .object(["type": "string", "enum": .array(values.map { .string($0) })])
    }

    public static func constant(_ value: JSONValue) -> JSONValue { .object(["const": value]) }

    public static func describe(_ schema: JSONValue, _ description: String) -> JSONValue {
        guard var o = schema.objectValue, o["$ref"] == nil else { return .object(["allOf": .array([schema]), "description": .string(description)]) }
        o["description"] = .string(description)
        return .object(o)
    }

    /// An object schema. `optional` names properties that may be omitted (request bodies);
    /// `open` allows properties not listed.
    public static func object(_ properties: [(String, JSONValue)], optional: Set<String> = [], open: Bool = false,
                       description: String? = nil) -> JSONValue {
        var o: JSONObject = ["type": "object"]
        if let description { o["description"] = .string(description) }
        o["properties"] = .object(JSONObject(properties))
        let required = properties.map(\.0).filter { !optional.contains($0) }
        if !required.isEmpty { o["required"] = .array(required.map { .string($0) }) }
        if !open { o["additionalProperties"] = false }
        return .object(o)
    }

    /// A map from client-chosen keys to `value`.
    public static func map(_ value: JSONValue, description: String) -> JSONValue {
        .object(["type": "object", "additionalProperties": value, "description": .string(description)])
    }

    /// `{"data": schema}` (every route under `/api/` but `/api/mobile/`).
    public static func dataEnvelope(_ schema: JSONValue) -> JSONValue { object([("data", schema)]) }

    /// `{"success": true, "message", "data"}` (`/api/mobile/**`, the mobile clients' own envelope).
    public static func mobileEnvelope(_ schema: JSONValue) -> JSONValue {
        object([("success", constant(true)), ("message", string), ("data", schema)])
    }
}
