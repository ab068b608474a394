import TSHTTP
import TSJSON

/// The documentation of one route: what `OpenAPIDocument` turns into a path item operation.
/// `method` + `pattern` are exactly what the route is registered with, so the document can be
/// checked against `Router.registeredRoutes`.
public struct OpenAPIOperation: Sendable {
    public enum Security: Sendable { case bearer, none }
    public enum Envelope: Sendable { case standard, mobile, none }

    public struct Body: Sendable {
        public let status: Int
        public let description: String
        public let schema: JSONValue?
        public let contentType: String
        public init(_ status: Int, _ description: String, schema: JSONValue?, contentType: String = "application/json") {
            self.status = status
            self.description = description
            self.schema = schema
            self.contentType = contentType
        }
    }

    public struct Parameter: Sendable {
        public let name: String
        public let location: String  // "query" or "header"
        public let description: String
        public let schema: JSONValue
        /// A required parameter missing from the request is a 400 (`RequestValidation`).
        public let required: Bool
    }

    public let method: HTTPMethod
    public let pattern: String
    public let tag: String
    public let summary: String
    public let description: String?
    public let security: Security
    public let envelope: Envelope
    public let requestSchema: JSONValue?
    public let requestRequired: Bool
    public let responses: [Body]
    public let parameters: [Parameter]
    /// Statuses this route answers in its error envelope (besides `default`).
    public let errors: [Int]

    public init(_ method: HTTPMethod, _ pattern: String, tag: String, summary: String, description: String? = nil,
                security: Security = .bearer, envelope: Envelope = .standard, request: JSONValue? = nil, requestRequired: Bool = true,
                responses: [Body], parameters: [Parameter] = [], errors: [Int] = []) {
        self.method = method
        self.pattern = pattern
        self.tag = tag
        self.summary = summary
        self.description = description
        self.security = security
        self.envelope = envelope
        requestSchema = request
        self.requestRequired = requestRequired
        self.responses = responses
        self.parameters = parameters
        self.errors = errors
    }

    /// `/api/rooms/:roomId` → `/api/rooms/{roomId}`; a trailing `*` wildcard is dropped
    /// (`/socket.io/*` → `/socket.io/`).
    public static func openAPIPath(_ pattern: String) -> String {
        var parts = pattern.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var trailingSlash = false
        if parts.last == "*" { parts.removeLast(); trailingSlash = true }
        let path = parts.map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 }.joined(separator: "/")
        return trailingSlash ? path + "/" : path
    }

    /// The `:name` parameters of the pattern, in order.
    public var pathParameters: [String] {
        pattern.split(separator: "/").filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) }
    }
}

// In an extension, so that the struct keeps its memberwise initializer for these to call.
extension OpenAPIOperation.Parameter {
    public init(query name: String, _ description: String, schema: JSONValue, required: Bool = false) {
        self.init(name: name, location: "query", description: description, schema: schema, required: required)
    }
    public init(header name: String, _ description: String, schema: JSONValue, required: Bool = false) {
        self.init(name: name, location: "header", description: description, schema: schema, required: required)
    }
}
