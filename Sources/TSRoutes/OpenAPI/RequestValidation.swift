import TSDomain
import TSHTTP
import TSJSON

/// Validates every request against the operation `OpenAPICatalog` documents for its route —
/// header and query parameters and the JSON body — before the route's handler runs, so the
/// document served at `/openapi.json` and the checks are one source of truth.
/// A request that does not conform gets 400 `VALIDATION_ERROR` naming the field and saying
/// why, in the route's envelope (415 for a body that is not `application/json`).
///
/// The check is one middleware of the request pipeline (`RequestPipeline`); the handler reads
/// the body it parsed from `RequestContext.body`.
///
/// On a route that needs a bearer token, a request without a valid one is handed to the
/// handler unchecked, which answers 401: the caller learns nothing about the route's input
/// before authenticating.
public enum RequestValidation {
    /// What the validation hands the handler: the parsed body (nil: none), or where a fast
    /// reader found its strings (`RequestValidation+FastBody.swift`).
    public enum ValidatedBody: Sendable {
        case tree(JSONValue?)
        case plainStrings([Range<Int>])
    }

    static let components = OpenAPIComponents.schemas
    static let checker = JSONSchemaCheck(components: components)

    /// The documented operation of each (method, pattern).
    static let operations: [String: OpenAPIOperation] = {
        var map: [String: OpenAPIOperation] = [:]
        for op in OpenAPICatalog.operations where map["\(op.method) \(op.pattern)"] == nil { map["\(op.method) \(op.pattern)"] = op }
        return map
    }()

    public static func operation(_ method: HTTPMethod, _ pattern: String) -> OpenAPIOperation? { operations["\(method) \(pattern)"] }

    /// The check of the route (method, pattern) as a middleware, or nil when the route documents
    /// nothing to check. Routes of the Engine.IO transport (no JSON envelope) answer their own
    /// errors and get none.
    public static func check(_ method: HTTPMethod, _ pattern: String, authenticator: Authenticator) -> Check? {
        guard let op = operation(method, pattern), op.envelope != .none, op.requestSchema != nil || !op.parameters.isEmpty else { return nil }
        return Check(operation: op, authenticator: authenticator)
    }

    /// The validation step of the request pipeline: checks the request against its documented
    /// operation and puts what it parsed into `RequestContext.body`, so the body is parsed once.
    public struct Check: RouteMiddleware {
        let operation: OpenAPIOperation
        let authenticator: Authenticator

        public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
            do {
                context.body = try validate(context.request, against: operation)
            } catch {
                // 401 before 400: an unauthenticated caller gets the handler's 401.
                if operation.security == .bearer, (try? await authenticator.user(for: context.request)) == nil { return try await next(&context) }
                throw error
            }
            return try await next(&context)
        }
    }

    /// Checks `request` against `op`; returns the parsed body when `op` documents one and the
    /// request has one (or, for a route in `plainStringReaders`, where its strings are). Throws an `APIError` (400/415) in the operation's envelope.
    public static func validate(_ request: HTTPRequest, against op: OpenAPIOperation) throws -> ValidatedBody {
        let envelope: Envelope = op.envelope == .mobile ? .mobile : .standard
        func fail(_ v: JSONSchemaCheck.Violation) -> APIError {
            APIError(DomainError.validation(field: v.field, message: v.message), envelope: envelope)
        }
        for p in op.parameters {
            let raw = p.location == "header" ? request.header(p.name) : request.queryItems[p.name]
            guard let raw else {
                if p.required { throw fail(.init(field: p.name, message: "is required")) }
                continue
            }
            if let v = parameterViolation(raw, name: p.name, schema: p.schema) { throw fail(v) }
        }
        guard let schema = op.requestSchema else { return .tree(nil) }
        if request.body.isEmpty && !op.requestRequired { return .tree(nil) }
        if let fast = fastBody(request, op) { return fast }  // RequestValidation+FastBody.swift
        let body: JSONValue
        do { body = try request.jsonBody() } catch { throw APIError.wrap(error, envelope: envelope) }
        if let v = checker.violation(body, against: schema, at: "body") { throw fail(v) }
        return .tree(body)
    }

    /// A query or header value is text: an `integer` parameter must be a base-10 integer (no
    /// sign but `-`, no spaces, no empty value) before its schema is checked.
    static func parameterViolation(_ raw: String, name: String, schema: JSONValue) -> JSONSchemaCheck.Violation? {
        let value: JSONValue
        if schema["type"]?.stringValue == "integer" {
            guard let i = parseInteger(raw) else { return .init(field: name, message: "must be an integer") }
            value = .int(i)
        } else {
            value = .string(raw)
        }
        return checker.violation(value, against: schema, at: name)
    }

    static func parseInteger(_ raw: String) -> Int64? {
        let digits = raw.hasPrefix("-") ? raw.utf8.dropFirst() : raw.utf8[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(raw)
    }
}
