import TSJSON

/// Runtime validation against the JSON Schema 2020-12 subset the OpenAPI document uses, so that a
/// request schema in `OpenAPICatalog` is both the documentation and the check:
/// one source of truth. Keywords (JSON Schema Validation 2020-12 §6): `$ref` (into
/// `#/components/schemas/`), `type` (a name or a list), `enum`, `const`, `allOf`, `anyOf`,
/// `oneOf`, `if`/`then`/`else` (§10.2.2), `properties`, `patternProperties`, `required`,
/// `additionalProperties` (boolean or schema), `items`,
/// `minItems`, `maxItems`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
/// `minLength`, `maxLength` (in Unicode code points, §6.3.1), `pattern` (searched, not anchored,
/// §6.3.3) and `format: uuid` (RFC 9562 text form). Any other keyword is a documentation
/// keyword and is ignored. A schema that uses a keyword outside this list for validation would
/// silently document more than is checked, so `OpenAPITests` checks that every keyword of every
/// request schema is one of `JSONSchemaCheck.keywords`. `x-patternMessage` (an OpenAPI
/// specification extension) is the error message for a `pattern` mismatch.
public struct JSONSchemaCheck: Sendable {
    /// The first problem found: where (a field path such as `memberIds[2]`, or `body`) and why.
    public struct Violation: Error, Sendable, Equatable {
        public let field: String
        public let message: String
    }

    /// The keywords this checker enforces, plus the annotation keywords it may skip.
    public static let keywords: Set<String> = [
        "$ref", "type", "enum", "const", "allOf", "anyOf", "oneOf", "if", "then", "else", "properties", "patternProperties", "required", "additionalProperties", "items",
        "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
        "pattern", "format", "description", "title", "examples", "default", "x-patternMessage",
    ]

    let components: JSONObject

    public init(components: JSONObject) { self.components = components }

    /// nil when `value` conforms to `schema`.
    public func violation(_ value: JSONValue, against schema: JSONValue, at field: String) -> Violation? {
        guard let s = schema.objectValue else {
            return schema.boolValue == false ? Violation(field: field, message: "is not allowed") : nil
        }
        if let ref = s["$ref"]?.stringValue {
            let prefix = "#/components/schemas/"
            guard ref.hasPrefix(prefix), let target = components[String(ref.dropFirst(prefix.count))] else {
                return Violation(field: field, message: "cannot be checked (unresolvable schema \(ref))")
            }
            if let v = violation(value, against: target, at: field) { return v }
        }
        if let t = s["type"], !(t.stringValue.map { Self.has(value, type: $0) } ?? false) {  // one name: no array built
            let types = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            if !types.contains(where: { Self.has(value, type: $0) }) {
                return Violation(field: field, message: "must be " + types.map(Self.article).joined(separator: " or "))
            }
        }
        if let e = s["enum"]?.arrayValue, !e.contains(where: { Self.equal($0, value) }) {
            return Violation(field: field, message: "must be one of " + e.map { $0.isNull ? "null" : ($0.stringValue ?? $0.serializedString()) }.joined(separator: ", "))
        }
        if let c = s["const"], !Self.equal(c, value) { return Violation(field: field, message: "must be \(c.serializedString())") }
        for sub in s["allOf"]?.arrayValue ?? [] {
            if let v = violation(value, against: sub, at: field) { return v }
        }
        if let any = s["anyOf"]?.arrayValue {
            var first: Violation?
            var matched = false
            for sub in any {
                if let v = violation(value, against: sub, at: field) { first = first ?? v } else { matched = true; break }
            }
            if !matched { return first ?? Violation(field: field, message: "matches none of the allowed forms") }
        }
        if let one = s["oneOf"]?.arrayValue {
            // As for anyOf, a value that matches no form is reported with the first form's
            // violation, which names the field (a missing or forbidden property) instead of `body`.
            var first: Violation?
            var n = 0
            for sub in one {
                if let v = violation(value, against: sub, at: field) { first = first ?? v } else { n += 1 }
            }
            if n == 0 { return first ?? Violation(field: field, message: "matches none of the allowed forms") }
            if n > 1 { return Violation(field: field, message: "is ambiguous") }
        }
        // §10.2.2.1–3: `then` applies when the value is valid against `if`, `else` when it is not;
        // the branch's own violation names the field (a requirement that depends on a value).
        if let condition = s["if"] {
            let branch = violation(value, against: condition, at: field) == nil ? s["then"] : s["else"]
            if let branch, let v = violation(value, against: branch, at: field) { return v }
        }
        switch value {
        case .object(let o):
            return objectViolation(o, s, field)
        case .array(let a):
            if let min = s["minItems"]?.intValue.map({ Int($0) }), a.count < min { return Violation(field: field, message: "must have at least \(min) item\(min == 1 ? "" : "s")") }
            if let max = s["maxItems"]?.intValue.map({ Int($0) }), a.count > max { return Violation(field: field, message: "must have at most \(max) items") }
            if let items = s["items"] {
                // The item's path (`field[i]`) is built only for the item that fails: no string
                // per valid item (interaction-state checks 50 ids per request).
                for (i, item) in a.enumerated() where violation(item, against: items, at: field) != nil {
                    return violation(item, against: items, at: "\(field)[\(i)]")
                }
            }
        case .string(let str):
            // Code points are counted only when the UTF-8 length (1–4 bytes per code point) cannot decide.
            let bytes = str.utf8.count
            var counted: Int?
            func length() -> Int {
                if let counted { return counted }
                let n = str.unicodeScalars.count
                counted = n
                return n
            }
            if let min = s["minLength"]?.intValue.map({ Int($0) }), (bytes + 3) / 4 < min, length() < min {
                return Violation(field: field, message: min == 1 ? "must not be empty" : "must be at least \(min) characters")
            }
            if let max = s["maxLength"]?.intValue.map({ Int($0) }), bytes > max, length() > max {
                return Violation(field: field, message: "must be at most \(max) characters")
            }
            if let p = s["pattern"]?.stringValue, !Self.matches(str, pattern: p) {
                return Violation(field: field, message: (s["x-patternMessage"]?.stringValue ?? "must match the pattern \(p)"))
            }
            if s["format"]?.stringValue == "uuid", !Self.isUUID(str) { return Violation(field: field, message: "must be a UUID") }
        case .int, .double:
            let d = value.doubleValue ?? 0
            if let min = s["minimum"]?.doubleValue, d < min { return Violation(field: field, message: "must be at least \(Self.number(min))") }
            if let max = s["maximum"]?.doubleValue, d > max { return Violation(field: field, message: "must be at most \(Self.number(max))") }
            if let min = s["exclusiveMinimum"]?.doubleValue, d <= min { return Violation(field: field, message: "must be greater than \(Self.number(min))") }
            if let max = s["exclusiveMaximum"]?.doubleValue, d >= max { return Violation(field: field, message: "must be less than \(Self.number(max))") }
        case .null, .bool:
            break
        }
        return nil
    }

    private func objectViolation(_ o: JSONObject, _ s: JSONObject, _ field: String) -> Violation? {
        let props = s["properties"]?.objectValue ?? JSONObject()
        let prefix = field == "body" ? "" : field + "."
        for name in s["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where o[name] == nil {
            return Violation(field: prefix + name, message: "is required")
        }
        let patterns = s["patternProperties"]?.objectValue ?? JSONObject()
        for (k, v) in o {
            if let p = props[k] {
                if let violation = violation(v, against: p, at: prefix + k) { return violation }
                continue
            }
            // §10.3.2.2: a key matched by a patternProperties pattern is not "additional".
            var matched = false
            for (pattern, p) in patterns where Self.matches(k, pattern: pattern) {
                matched = true
                if let violation = violation(v, against: p, at: prefix + k) { return violation }
            }
            if matched { continue }
            if let extra = s["additionalProperties"] {
                if extra.boolValue == false { return Violation(field: prefix + k, message: "is not a known field") }
                if let violation = violation(v, against: extra, at: prefix + k) { return violation }
            }
        }
        return nil
    }

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object), ("number", .int): return true
        case ("number", .double(let d)): return d.isFinite
        case ("integer", .int): return true
        case ("integer", .double(let d)): return d.isFinite && d.rounded() == d  // 2020-12 §6.1.1: 1.0 is an integer
        default: return false
        }
    }

    static func article(_ type: String) -> String {
        switch type {
        case "null": return "null"
        case "integer", "object", "array": return "an \(type)"
        default: return "a \(type)"
        }
    }

    /// JSON equality: 1 and 1.0 are the same number.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue, a.stringValue == nil, b.stringValue == nil { return x == y }
        return a == b
    }

    static func number(_ d: Double) -> String {
        d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }

    /// RFC 9562 §4 text form: 8-4-4-4-12 hexadecimal digits, either case.
    static func isUUID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != UInt8(ascii: "-") { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)) {
                return false
            }
        }
        return true
    }

    /// ECMA-262 `pattern` search (JSON Schema 2020-12 §6.3.3; not implicitly anchored). The
    /// patterns of the request schemas are few and fixed, so each is compiled on use.
    static func matches(_ s: String, pattern: String) -> Bool {
        guard let regex = try? Regex(pattern) else { return false }
        return (try? regex.firstMatch(in: s)) != nil
    }
}
