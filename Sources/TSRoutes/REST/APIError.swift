import TSContract
import TSDomain
import TSHTTP
import TSJSON

/// The two error envelopes (docs/api.md, "Conventions"): `{"error": {code, message}}` for `/api/**`, and
/// `{"success": false, message, error, code}` for the mobile routes under `/api/mobile/**`.
public enum Envelope: Sendable {
    case standard
    case mobile

    public static func forPath(_ path: String) -> Envelope { path.hasPrefix("/api/mobile/") || path == "/api/mobile" ? .mobile : .standard }

    /// The error body for `status`/`code`/`message`, plus the offending field for a 400.
    public func errorBody(code: String, message: String, field: String? = nil) -> JSONValue {
        switch self {
        case .standard:
            var e: JSONObject = ["code": .string(code), "message": .string(message)]
            if let field { e["field"] = .string(field) }
            return .object(["error": .object(e)])
        case .mobile:
            var o: JSONObject = ["success": false, "message": .string(message), "error": .string(message), "code": .string(code)]
            if let field { o["field"] = .string(field) }
            return .object(o)
        }
    }
}

/// A domain error rendered in the envelope of the route that raised it.
public struct APIError: Error, HTTPResponseConvertibleError, Sendable {
    public let status: Int
    public let code: String
    public let message: String
    public let field: String?
    public let envelope: Envelope
    /// Sent as `Retry-After` (429, 503).
    public let retryAfterSeconds: Int64?

    public init(status: Int, code: String, message: String, field: String? = nil, envelope: Envelope = .standard,
                retryAfterSeconds: Int64? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.envelope = envelope
        self.retryAfterSeconds = retryAfterSeconds
    }

    public init(_ error: DomainError, envelope: Envelope) {
        self.init(status: error.status, code: error.code, message: error.message, field: error.field, envelope: envelope)
    }

    public func response(for request: HTTPRequest?) -> HTTPResponse {
        var response = HTTPResponse.json(envelope.errorBody(code: code, message: message, field: field), status: status)
        if let retryAfterSeconds { response.headers.replaceOrAdd("Retry-After", String(retryAfterSeconds)) }
        return response
    }

    /// Maps anything a handler threw onto the contract: domain errors keep their status, HTTP
    /// errors (415, 413, …) keep theirs, the rest propagate (the server answers 500 without detail).
    static func wrap(_ error: any Error, envelope: Envelope) -> any Error {
        if let reply = ErrorReply(error) {
            return APIError(status: reply.status, code: reply.code, message: reply.message, field: reply.field, envelope: envelope,
                            retryAfterSeconds: reply.retryAfterSeconds)
        }
        if let h = error as? HTTPError, envelope == .mobile {
            return APIError(status: h.status, code: h.code, message: h.message, field: h.field, envelope: .mobile)
        }
        return error
    }
}
