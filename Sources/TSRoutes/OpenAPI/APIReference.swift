import TSJSON

/// The REST part of docs/api.md, rendered from the same catalog and schemas that build
/// `/openapi.json` and that `RequestValidation` enforces, so the reference cannot drift from the
/// server (`APIReferenceTests` fails when the committed file is stale, and rewrites it with
/// `TOUCHSYNC_UPDATE_API_DOCS=1`).
public enum APIReference {
    public static let beginMarker = "<!-- BEGIN GENERATED: REST reference (APIReference.markdown; do not edit by hand) -->"
    public static let endMarker = "<!-- END GENERATED: REST reference -->"

    /// Every documented operation, grouped by tag, then every object schema.
    public static func markdown(operations: [OpenAPIOperation] = OpenAPICatalog.operations) -> String {
        let components = OpenAPIComponents.schemas
        var out = ""
        var tags: [String] = []
        for op in operations where !tags.contains(op.tag) { tags.append(op.tag) }
        out += "Routes by group: " + tags.map { "[\($0)](#\(anchor($0)))" }.joined(separator: " · ") + "\n\n"
        for tag in tags {
            out += "### \(tag)\n\n"
            for op in operations where op.tag == tag { out += operation(op) }
        }
        out += "### Objects\n\n"
        out += "Every object is exactly as listed: no other field, and a field without a value is `null`, never omitted "
            + "(request bodies: fields marked optional may be omitted). Lengths count Unicode code points.\n\n"
        for (name, schema) in components {
            out += "#### \(name)\n\n"
            out += object(schema, components: components)
        }
        return out
    }

    static func anchor(_ heading: String) -> String {
        var out = ""
        for c: Character in heading.lowercased() {
            let mapped: Character = c == " " ? "-" : c
            if mapped.isLetter || mapped.isNumber || mapped == "-" { out.append(mapped) }
        }
        return out
    }

    static func operation(_ op: OpenAPIOperation) -> String {
        var s = "#### `\(op.method) \(op.pattern)`\n\n"
        s += op.summary + "."
        if let d = op.description { s += " " + d }
        s += "\n\n"
        s += "- Auth: " + (op.security == .bearer ? "`Authorization: Bearer <token>` (401 without a valid one)" : "none") + "\n"
        for p in op.parameters {
            s += "- \(p.location == "header" ? "Header" : "Query") `\(p.name)`\(p.required ? " (required)" : ""): \(type(p.schema))"
            let l = limits(p.schema)
            if !l.isEmpty { s += ", " + l }
            s += ". \(p.description)\n"
        }
        if let body = op.requestSchema {
            let name = type(body)
            let linked = body["$ref"] != nil ? "[\(name)](#\(anchor(name)))" : name
            s += "- Body\(op.requestRequired ? "" : " (optional: an empty body is `{}`)"): \(linked), `Content-Type: application/json`\n"
        }
        for r in op.responses {
            s += "- \(r.status): \(r.description)"
            if let schema = r.schema { s += r.contentType == "application/json" ? " — \(shape(schema))" : " — `\(r.contentType)`" }
            s += "\n"
        }
        switch op.envelope {
        case .standard, .mobile:
            var statuses = op.errors
            if op.security == .bearer && !statuses.contains(401) { statuses.append(401) }
            let env = op.envelope == .mobile ? "`MobileError`" : "`Error`"
            if !statuses.isEmpty {
                s += "- Errors: " + statuses.sorted().map { "\($0) \(errorMeaning($0, bearer: op.security == .bearer))" }.joined(separator: "; ")
                    + " — in \(env)\n"
            } else {
                s += "- Errors: in \(env)\n"
            }
        case .none:
            break
        }
        return s + "\n"
    }

    static func errorMeaning(_ status: Int, bearer: Bool) -> String {
        switch status {
        case 400: return "a field breaks its limits (`error.field` names it)"
        case 401: return bearer ? "missing, invalid, expired or revoked token" : "wrong username or password"
        case 403: return "not a member"
        case 404: return "not found"
        case 409: return "conflict"
        case 415: return "body is not `application/json`"
        case 429: return bearer ? "the caller's write limit is spent (`RATE_LIMITED`, `Retry-After`)"
            : "too many attempts from this client address (sign-ups, failed logins: `RATE_LIMITED`, `Retry-After`)"
        case 504: return "a live node of the cluster did not confirm in time (`CLUSTER_TIMEOUT` names it)"
        default: return ""
        }
    }

    /// `{"data": Room}`, `{"success": true, "message", "data": Post}`, or the type.
    static func shape(_ schema: JSONValue) -> String {
        if let props = schema["properties"]?.objectValue {
            let keys = props.keys
            if keys == ["data"], let d = props["data"] { return "`{\"data\": \(type(d))}`" }
            if keys == ["success", "message", "data"], let d = props["data"] { return "`{\"success\": true, \"message\", \"data\": \(type(d))}`" }
        }
        return "`\(type(schema))`"
    }

    /// A short type: `string`, `string | null`, `Room`, `array of User`, `object`.
    static func type(_ schema: JSONValue) -> String {
        guard let o = schema.objectValue else { return schema.boolValue == false ? "nothing" : "any" }
        if let ref = o["$ref"]?.stringValue { return String(ref.split(separator: "/").last ?? "") }
        if let any = o["anyOf"]?.arrayValue, o["type"] == nil, o["properties"] == nil { return any.map(type).joined(separator: " | ") }
        if let all = o["allOf"]?.arrayValue, all.count == 1 { return type(all[0]) }
        if let c = o["const"] { return c.serializedString() }
        if let e = o["enum"]?.arrayValue, o["type"]?.stringValue == "string" { return e.map { $0.serializedString() }.joined(separator: " | ") }
        let types = o["type"]?.arrayValue?.compactMap(\.stringValue) ?? o["type"].flatMap(\.stringValue).map { [$0] } ?? ["any"]
        return types.map { t in
            if t == "array", let items = o["items"] { return "array of \(type(items))" }
            if t == "string", let e = o["enum"]?.arrayValue { return e.filter { !$0.isNull }.map { $0.serializedString() }.joined(separator: " | ") }
            return t
        }.joined(separator: " | ")
    }

    /// The limits a value must meet, in words.
    static func limits(_ schema: JSONValue) -> String {
        var o = schema.objectValue ?? JSONObject()
        if let all = o["allOf"]?.arrayValue, all.count == 1, let inner = all[0].objectValue { o = inner }
        var l: [String] = []
        if let min = o["minLength"]?.intValue, let max = o["maxLength"]?.intValue { l.append("\(min)–\(max) characters") }
        else if let max = o["maxLength"]?.intValue { l.append("at most \(max) characters") }
        else if let min = o["minLength"]?.intValue { l.append("at least \(min) characters") }
        if let p = o["pattern"]?.stringValue { l.append(o["x-patternMessage"]?.stringValue.map { "\($0) (`\(p)`)" } ?? "matches `\(p)`") }
        if o["format"]?.stringValue == "uuid" { l.append("a UUID") }
        if let min = o["minimum"], let max = o["maximum"] { l.append("\(min.serializedString()) to \(max.serializedString())") }
        else if let min = o["minimum"] { l.append("≥ \(min.serializedString())") }
        else if let max = o["maximum"] { l.append("≤ \(max.serializedString())") }
        if let min = o["minItems"]?.intValue { l.append("at least \(min) item\(min == 1 ? "" : "s")") }
        if let max = o["maxItems"]?.intValue { l.append("at most \(max) items") }
        return l.joined(separator: ", ")
    }

    static func object(_ schema: JSONValue, components: JSONObject) -> String {
        var s = ""
        if let d = schema["description"]?.stringValue { s += d + "\n\n" }
        guard let props = schema["properties"]?.objectValue else {
            return s + "`\(type(schema))`" + (limits(schema).isEmpty ? "" : " (\(limits(schema)))") + "\n\n"
        }
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        if let any = schema["anyOf"]?.arrayValue {
            let alternatives = any.compactMap { $0["required"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " and ") }
            s += "At least one of: " + alternatives.map { "`\($0)`" }.joined(separator: ", ") + ".\n\n"
        }
        s += "| field | type | | limits and notes |\n|---|---|---|---|\n"
        for (name, p) in props {
            var notes = limits(p)
            let d = p["description"]?.stringValue ?? p["allOf"].flatMap { _ in p["description"]?.stringValue }
            if let d { notes += (notes.isEmpty ? "" : ". ") + d }
            let t = type(p).replacing("|", with: "\\|")
            s += "| `\(name)` | \(t) | \(required.contains(name) ? "" : "optional") | \(notes.replacing("|", with: "\\|")) |\n"
        }
        if schema["additionalProperties"]?.objectValue != nil || schema["additionalProperties"] == nil {
            s += "\nOther fields are allowed.\n"
        }
        return s + "\n"
    }
}
