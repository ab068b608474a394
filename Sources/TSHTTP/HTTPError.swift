import Logging
import TSJSON

/// An error that renders its own response (e.g. the mobile envelope of a higher layer).
public protocol HTTPResponseConvertibleError: Error {
    func response(for request: HTTPRequest?) -> HTTPResponse
}

/// An error with a status, a contract error code and a message, rendered as
/// `{"error":{"code":…,"message":…}}` (the error envelope of docs/api.md, "Conventions").
public struct HTTPError: Error, Sendable, HTTPResponseConvertibleError, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    /// Extra response headers (e.g. `Allow`, `Retry-After`).
    public var headers: HTTPHeaders
    /// The input a 400 is about (`body` for the body as a whole), as every validation error names one.
    public var field: String?

    public init(status: Int, code: String, message: String, headers: HTTPHeaders = HTTPHeaders(), field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.field = field
    }

    /// Uses the default code for `status` (see `HTTPStatus.errorCode`).
    public init(status: Int, message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.init(status: status, code: HTTPStatus.errorCode(status), message: message, headers: headers)
    }

    public var description: String { "HTTPError(\(status) \(code): \(message))" }

    public static func validation(_ message: String, field: String? = nil) -> HTTPError {
        HTTPError(status: 400, code: "VALIDATION_ERROR", message: message, field: field)
    }
    public static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, code: "BAD_REQUEST", message: message) }
    public static func unauthorized(_ message: String = "Unauthorized") -> HTTPError { HTTPError(status: 401, code: "UNAUTHORIZED", message: message) }
    public static func forbidden(_ message: String = "Forbidden") -> HTTPError { HTTPError(status: 403, code: "FORBIDDEN", message: message) }
    public static func notFound(_ message: String = "Not found") -> HTTPError { HTTPError(status: 404, code: "NOT_FOUND", message: message) }
    public static func methodNotAllowed(allow: [HTTPMethod]) -> HTTPError {
        HTTPError(status: 405, code: "METHOD_NOT_ALLOWED", message: "Method not allowed",
                  headers: ["Allow": allow.map(\.rawValue).joined(separator: ", ")])
    }
    public static func conflict(_ message: String) -> HTTPError { HTTPError(status: 409, code: "CONFLICT", message: message) }
    public static func payloadTooLarge(_ message: String = "Request body too large") -> HTTPError { HTTPError(status: 413, code: "PAYLOAD_TOO_LARGE", message: message) }
    public static func unsupportedMediaType(_ message: String = "Content-Type must be application/json") -> HTTPError { HTTPError(status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: message) }
    public static func rateLimited(retryAfterSeconds: Int) -> HTTPError {
        HTTPError(status: 429, code: "RATE_LIMITED", message: "Too many requests", headers: ["Retry-After": String(retryAfterSeconds)])
    }
    public static func internalError() -> HTTPError { HTTPError(status: 500, code: "INTERNAL", message: "Internal server error") }
    public static func serviceUnavailable(_ message: String = "Server is shutting down", retryAfterSeconds: Int? = nil) -> HTTPError {
        HTTPError(status: 503, code: "SERVICE_UNAVAILABLE", message: message,
                  headers: retryAfterSeconds.map { ["Retry-After": String($0)] } ?? HTTPHeaders())
    }

    /// The contract error body.
    public var jsonBody: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        if let field { error["field"] = .string(field) }
        return .object(["error": .object(error)])
    }

    public func response(for request: HTTPRequest?) -> HTTPResponse {
        .json(jsonBody, status: status, headers: headers)
    }
}

extension HTTPResponse {
    /// Renders any error: `HTTPResponseConvertibleError`s render themselves; anything else becomes
    /// a 500 `INTERNAL` that leaks nothing, and the error is logged with the request id.
    public static func from(error: any Error, request: HTTPRequest?, logger: Logger) -> HTTPResponse {
        if let convertible = error as? any HTTPResponseConvertibleError {
            return convertible.response(for: request)
        }
        logger.error("unhandled error", metadata: [
            "requestID": .string(request?.requestID ?? "-"),
            "method": .string(request?.method.rawValue ?? "-"),
            "path": .string(request?.path ?? "-"),
            "error": .string(String(reflecting: error)),
        ])
        return HTTPError.internalError().response(for: request)
    }
}
