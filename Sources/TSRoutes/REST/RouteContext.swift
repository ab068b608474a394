import TSDomain
import TSHTTP
import TSJSON

/// What an authenticated handler gets: the request, the caller, and helpers to read input.
public struct RouteContext: Sendable {
    public let request: HTTPRequest
    public let user: PublicUser
    public let envelope: Envelope

    /// The socket that made this request (`X-Socket-Id`), whose own room events are skipped.
    /// Longer than 64 characters is refused with 400 before the handler runs (`RequestValidation`).
    public var originSocketId: String? { Self.originSocketId(of: request) }

    static func originSocketId(of request: HTTPRequest) -> String? {
        guard let s = request.header("X-Socket-Id"), !s.isEmpty, s.utf8.count <= 64 else { return nil }
        return s
    }

    public func param(_ name: String) -> String { request.parameters[name] ?? "" }

    /// The JSON body as an `Input` (already checked against the route's documented schema by
    /// `RequestValidation`); 415 for another content type, 400 for anything but an object.
    public func input() throws -> Input {
        try Input(value: RequestValidation.body(of: request))
    }

    /// An optional body: an empty body reads as `{}`.
    public func optionalInput() throws -> Input {
        if request.body.isEmpty { return Input(JSONObject()) }
        return try input()
    }

    /// `?limit=` within 1...max, default `fallback`.
    public func limit(default fallback: Int = 50, max: Int = 100) throws -> Int {
        guard let raw = request.queryItems["limit"] else { return fallback }
        guard let v = Int(raw), (1...max).contains(v) else {
            throw DomainError.validation(field: "limit", message: "must be an integer from 1 to \(max)")
        }
        return v
    }

    public var before: String? {
        guard let b = request.queryItems["before"], !b.isEmpty else { return nil }
        return b
    }
}

/// Success bodies: `{"data": …}` on `/api/**`, `{"success": true, "message", "data"}` on mobile routes.
public enum Reply {
    public static func data(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        .json(.object(["data": value]), status: status)
    }

    public static func mobile(_ message: String, _ value: JSONValue, status: Int = 200) -> HTTPResponse {
        .json(.object(["success": true, "message": .string(message), "data": value]), status: status)
    }
}
