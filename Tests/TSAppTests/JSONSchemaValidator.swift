import Foundation
import TSJSON

/// Checks a JSON value against a JSON Schema 2020-12 schema of an OpenAPI 3.1 document: the
/// keywords our document uses ($ref into components, type (lists included), enum, const,
/// properties, required, additionalProperties, items, anyOf, oneOf, allOf, minItems, maxItems,
/// minimum, maximum, exclusiveMinimum, minLength, maxLength, pattern, patternProperties). `format` is not checked.
struct JSONSchemaValidator {
    let document: JSONValue

    /// The problems found, each with a JSON path; empty when `value` conforms.
    func validate(_ value: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        guard let s = schema.objectValue else { return schema.boolValue == false ? ["\(path): no value allowed"] : [] }
        var errors: [String] = []
        if let ref = s["$ref"]?.stringValue {
            guard let target = resolve(ref) else { return ["\(path): unresolvable \(ref)"] }
            errors += validate(value, against: target, at: path)
        }
        if let t = s["type"] {
            let types = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            if !types.contains(where: { Self.has(value, type: $0) }) { return errors + ["\(path): expected \(types.joined(separator: "|")), got \(value.serializedString().prefix(80))"] }
        }
        if let e = s["enum"]?.arrayValue, !e.contains(value) { errors.append("\(path): \(value.serializedString()) not in \(JSONValue.array(e).serializedString())") }
        if let c = s["const"], c != value { errors.append("\(path): expected \(c.serializedString())") }
        if let all = s["allOf"]?.arrayValue { for sub in all { errors += validate(value, against: sub, at: path) } }
        if let any = s["anyOf"]?.arrayValue, !any.contains(where: { validate(value, against: $0, at: path).isEmpty }) {
            errors.append("\(path): matches no anyOf branch")
        }
        if let one = s["oneOf"]?.arrayValue, one.filter({ validate(value, against: $0, at: path).isEmpty }).count != 1 {
            errors.append("\(path): must match exactly one oneOf branch")
        }
        if let o = value.objectValue {
            let props = s["properties"]?.objectValue ?? JSONObject()
            for name in s["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where o[name] == nil {
                errors.append("\(path): missing required \(name)")
            }
            for (k, v) in o {
                let patterns = (s["patternProperties"]?.objectValue?.pairs ?? []).filter { k.range(of: $0.0, options: .regularExpression) != nil }
                if let p = props[k] {
                    errors += validate(v, against: p, at: "\(path).\(k)")
                } else if !patterns.isEmpty {
                    for (_, sub) in patterns { errors += validate(v, against: sub, at: "\(path).\(k)") }
                } else if let extra = s["additionalProperties"] {
                    if extra.boolValue == false { errors.append("\(path): unexpected property \(k)") } else if extra.objectValue != nil {
                        errors += validate(v, against: extra, at: "\(path).\(k)")
                    }
                }
            }
        }
        if let a = value.arrayValue {
            if let items = s["items"] { for (i, v) in a.enumerated() { errors += validate(v, against: items, at: "\(path)[\(i)]") } }
            if let n = s["minItems"]?.intValue, a.count < n { errors.append("\(path): fewer than \(n) items") }
            if let n = s["maxItems"]?.intValue, a.count > n { errors.append("\(path): more than \(n) items") }
        }
        if let d = value.doubleValue ?? value.intValue.map(Double.init) {
            if let m = Self.number(s["minimum"]), d < m { errors.append("\(path): \(d) < minimum \(m)") }
            if let m = Self.number(s["maximum"]), d > m { errors.append("\(path): \(d) > maximum \(m)") }
            if let m = Self.number(s["exclusiveMinimum"]), d <= m { errors.append("\(path): \(d) <= exclusiveMinimum \(m)") }
        }
        if let str = value.stringValue {
            if let n = s["minLength"]?.intValue, str.count < n { errors.append("\(path): shorter than \(n)") }
            if let n = s["maxLength"]?.intValue, str.count > n { errors.append("\(path): longer than \(n)") }
            if let p = s["pattern"]?.stringValue, str.range(of: p, options: .regularExpression) == nil {
                errors.append("\(path): \(str) does not match \(p)")
            }
        }
        return errors
    }

    func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/") else { return nil }
        var node: JSONValue? = document
        for part in ref.dropFirst(2).split(separator: "/") { node = node?[String(part).replacingOccurrences(of: "~1", with: "/")] }
        return node
    }

    static func number(_ v: JSONValue?) -> Double? { v?.doubleValue ?? v?.intValue.map(Double.init) }

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("integer", .int): return true
        case ("integer", .double(let d)): return d == d.rounded()
        case ("number", .int), ("number", .double): return true
        default: return false
        }
    }
}
