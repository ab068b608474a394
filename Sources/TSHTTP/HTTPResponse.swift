import Logging
import TSJSON
import TSSockets

/// A response produced by a handler. The server adds `Content-Length`, `Date`, `X-Request-Id`
/// and `Connection` itself.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The authenticated user, for the access log (set by auth middleware/handlers).
    public var logUserID: String?
    /// The level of this request's access-log line: `.debug` keeps high-frequency polls (the
    /// inspector's) out of the info log.
    public var accessLogLevel: Logger.Level = .info
    /// The matched route pattern, for metrics; set by the router.
    public var routePattern: String?
    /// For `101 Switching Protocols`: after the head is written, called on the connection's loop
    /// with the bytes already received after the request, so the callee can install a new
    /// `ConnectionHandler`. The HTTP layer then forgets the connection.
    public var upgrade: (@Sendable (Connection, _ leftover: [UInt8]) -> Void)?
    /// Closes the connection without writing anything, as a process that exits leaves a pending
    /// request (`noAnswer`): the client sees the connection end, not a response.
    public var closesWithoutAnswer = false

    /// The connection closes with no response written (`closesWithoutAnswer`).
    public static var noAnswer: HTTPResponse {
        var r = HTTPResponse(status: 503)
        r.closesWithoutAnswer = true
        return r
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `application/json; charset=utf-8` with `value` serialized.
    public static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var h = headers
        if !h.contains("Content-Type") { h.add("Content-Type", "application/json; charset=utf-8") }
        return HTTPResponse(status: status, headers: h, body: value.serialized())
    }

    /// `text/plain; charset=utf-8`.
    public static func text(_ text: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var h = headers
        if !h.contains("Content-Type") { h.add("Content-Type", "text/plain; charset=utf-8") }
        return HTTPResponse(status: status, headers: h, body: Array(text.utf8))
    }

    /// No content (204 by default).
    public static func empty(status: Int = 204, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: [])
    }

    /// Raw bytes with a content type.
    public static func bytes(_ bytes: [UInt8], contentType: String, status: Int = 200,
                             headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var h = headers
        h.replaceOrAdd("Content-Type", contentType)
        return HTTPResponse(status: status, headers: h, body: bytes)
    }
}
