import TSContract
import TSHTTP
import TSJSON

/// The OpenAPI 3.1 document of the running server, generated from its route table: one operation
/// per registered (method, pattern), described by `OpenAPICatalog`. Routes that are not
/// registered (test mode off) are not in the document.
public enum OpenAPIDocument {
    public typealias RouteKey = (method: HTTPMethod, pattern: String)

    /// Registered routes with no catalog entry.
    public static func undocumented(_ routes: [RouteKey], catalog: [OpenAPIOperation] = OpenAPICatalog.operations) -> [String] {
        routes.filter { r in !catalog.contains { $0.method == r.method && $0.pattern == r.pattern } }.map { "\($0.method) \($0.pattern)" }
    }

    /// Catalog entries whose route is not registered.
    public static func unregistered(_ routes: [RouteKey], catalog: [OpenAPIOperation] = OpenAPICatalog.operations) -> [String] {
        catalog.filter { op in !routes.contains { $0.method == op.method && $0.pattern == op.pattern } }.map { "\($0.method) \($0.pattern)" }
    }

    public static func build(routes: [RouteKey], version: String, catalog: [OpenAPIOperation] = OpenAPICatalog.operations) -> JSONValue {
        let documented = catalog.filter { op in routes.contains { $0.method == op.method && $0.pattern == op.pattern } }
        var paths = JSONObject()
        var tags: [String] = []
        // Paths in catalog order (grouped by tag), methods in catalog order within a path.
        for op in documented {
            let path = OpenAPIOperation.openAPIPath(op.pattern)
            var item = paths[path]?.objectValue ?? JSONObject()
            item[op.method.description.lowercased()] = operation(op)
            paths[path] = .object(item)
            if !tags.contains(op.tag) { tags.append(op.tag) }
        }
        var components = JSONObject()
        components["schemas"] = .object(OpenAPIComponents.schemas)
        components["securitySchemes"] = ["bearerAuth": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                                        "description": "HS256 JWT from register/login or `touchsync token USERNAME`."]]
        components["headers"] = ["X-Request-Id": ["description": "Every response carries the request id (also in the access log).",
                                                  "schema": ["type": "string"]]]
        return .object([
            "openapi": "3.1.0",
            "info": .object([
                "title": "TouchSync API", "version": .string(version),
                "description": "REST API of the TouchSync server: auth, rooms, canvas elements, reactions, messages, posts, push notifications and operations. Realtime events: docs/realtime.md. Test-target mode: docs/test-mode.md.",
                "license": ["name": "See the repository"],
            ]),
            "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
            "servers": [["url": "/", "description": "This server"]],
            "tags": .array(tags.map { .object(["name": .string($0)]) }),
            "paths": .object(paths),
            "components": .object(components),
        ])
    }

    static func operation(_ op: OpenAPIOperation) -> JSONValue {
        var o = JSONObject()
        o["operationId"] = .string(operationId(op))
        o["tags"] = [.string(op.tag)]
        o["summary"] = .string(op.summary)
        if let d = op.description { o["description"] = .string(d) }
        switch op.security {
        case .bearer: o["security"] = [["bearerAuth": []]]
        case .none: o["security"] = []
        }
        var params: [JSONValue] = op.pathParameters.map { name in
            ["name": .string(name), "in": "path", "required": true, "schema": ["type": "string"]]
        }
        for p in op.parameters {
            params.append(["name": .string(p.name), "in": .string(p.location), "required": .bool(p.required), "description": .string(p.description), "schema": p.schema])
        }
        if !params.isEmpty { o["parameters"] = .array(params) }
        if let body = op.requestSchema {
            o["requestBody"] = ["required": .bool(op.requestRequired), "content": ["application/json": ["schema": body]]]
        }
        var responses = JSONObject()
        for r in op.responses {
            var resp: JSONObject = ["description": .string(r.description), "headers": ["X-Request-Id": ["$ref": "#/components/headers/X-Request-Id"]]]
            if let schema = r.schema { resp["content"] = .object([r.contentType: ["schema": schema]]) }
            responses[String(r.status)] = .object(resp)
        }
        let errorSchema: JSONValue? = switch op.envelope {
        case .standard: OpenAPISchema.ref("Error")
        case .mobile: OpenAPISchema.ref("MobileError")
        case .none: nil
        }
        if let errorSchema {
            var statuses = op.errors
            if op.security == .bearer && !statuses.contains(401) { statuses.append(401) }
            // Every route with a body answers 413 before it reads one larger than server.maxBodyBytes
            // (RFC 9110 §15.5.14): a client (or a fuzzer sending a schema-violating body) meets it
            // whatever the body's schema says.
            if op.requestSchema != nil && !statuses.contains(413) { statuses.append(413) }
            for status in statuses.sorted() {
                var headers: JSONObject = ["X-Request-Id": ["$ref": "#/components/headers/X-Request-Id"]]
                var description = HTTPStatus.reasonPhrase(status)
                if status == 413 { description = "The body is larger than server.maxBodyBytes (1 MiB by default): PAYLOAD_TOO_LARGE, nothing read or written" }
                if status == 429 {
                    // limits.*: the caller's budget for this kind of write is spent (docs/limits.md).
                    description = op.security == .bearer
                        ? "The caller's write limit for this kind of write is spent (limits.*): RATE_LIMITED, nothing written"
                        : "Too many attempts from this client address (limits.signUpsPerHour, auth.*FailedLogin*): RATE_LIMITED, nothing done"
                    headers["Retry-After"] = ["description": "Seconds until one more attempt is allowed", "schema": ["type": "integer", "minimum": 1]]
                }
                responses[String(status)] = .object(["description": .string(description), "headers": .object(headers),
                                                     "content": ["application/json": ["schema": errorSchema]]])
            }
            responses["default"] = .object(["description": "Any other error (405, 413, 415, 429, 500, 503) in the same envelope",
                                            "content": ["application/json": ["schema": errorSchema]]])
        }
        o["responses"] = .object(responses)
        return .object(o)
    }

    /// `POST /api/rooms/:roomId/elements` → `post_api_rooms_roomId_elements`.
    static func operationId(_ op: OpenAPIOperation) -> String {
        var id = op.method.description.lowercased()
        for part in op.pattern.split(separator: "/") {
            let clean = part.filter { $0.isLetter || $0.isNumber }
            id += "_" + (clean.isEmpty ? "all" : clean)
        }
        return id
    }
}
