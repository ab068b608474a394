import Foundation

/// Why a call to the backend failed. Every case's `description` says what to do about it.
public enum TouchSyncError: Error, Sendable, CustomStringConvertible, Equatable {
    /// No backend URL in the environment (or not a URL).
    case notConfigured(String)
    /// Nothing answered at `url`.
    case unreachable(url: URL, underlying: String)
    /// The server answered, but its test routes are off (404): it was not started with `--test-mode`.
    case notInTestMode(url: URL)
    /// The server answered with an error status.
    case api(APIFailure)
    /// The answer did not decode into the model: the model and the server disagree.
    case decoding(route: String, type: String, detail: String, body: String)
    /// `TouchSyncEvents.next` waited `timeout` seconds without the event arriving.
    case eventTimeout(EventTimeout)

    public var description: String {
        switch self {
        case .notConfigured(let why): return "TouchSync backend not configured: \(why)"
        case .unreachable(let url, let underlying): return "TouchSync backend at \(url) did not answer: \(underlying)"
        case .notInTestMode(let url):
            return "TouchSync server at \(url) is not in test mode (GET /api/test/events is 404): start it with "
                + "`touchsync serve --test-mode` or run the tests under `touchsync exec`"
        case .api(let failure): return failure.description
        case .decoding(let route, let type, let detail, let body):
            return "\(route): the answer does not decode as \(type): \(detail)\nbody: \(body)"
        case .eventTimeout(let t): return t.description
        }
    }
}

/// An error answer: the status and the server's `{"error": {code, message, field}}` (or the
/// mobile routes' `{"success": false, code, message, field}`).
public struct APIFailure: Sendable, Equatable, CustomStringConvertible {
    /// `METHOD /path` as the library called it.
    public let route: String
    public let status: Int
    /// `VALIDATION_ERROR`, `UNAUTHORIZED`, `NOT_FOUND`, … (nil when the body was not an error envelope).
    public let code: String?
    public let message: String?
    /// The offending field of a 400.
    public let field: String?
    /// The raw body (at most 2000 bytes), for what the envelope does not say.
    public let body: String

    init(route: String, status: Int, body: Data) {
        self.route = route
        self.status = status
        self.body = String(decoding: body.prefix(2000), as: UTF8.self)
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let error = object?["error"] as? [String: Any] ?? object
        code = error?["code"] as? String
        message = error?["message"] as? String
        field = error?["field"] as? String
    }

    public var description: String {
        var s = "\(route) answered \(status)"
        if let code { s += " \(code)" }
        if let message { s += ": \(message)" }
        if let field { s += " (field \(field))" }
        if code == nil { s += ": \(body)" }
        return s
    }
}

/// What `TouchSyncEvents.next` awaited and what arrived instead.
public struct EventTimeout: Sendable, Equatable, CustomStringConvertible {
    public let awaited: String
    public let timeout: TimeInterval
    /// The events that arrived while waiting (and were not taken by an earlier call), oldest first.
    public let arrived: [RealtimeEvent]

    public var description: String {
        let shown = arrived.suffix(20).map { e in "#\(e.seq) \(e.event)\(e.target.roomId.map { " room \($0)" } ?? "")" }
        let list = arrived.isEmpty ? "no events arrived" : "events that did arrive: " + shown.joined(separator: ", ")
            + (arrived.count > 20 ? " (the last 20 of \(arrived.count))" : "")
        return "timed out after \(timeout) s waiting for \(awaited); \(list)"
    }
}
