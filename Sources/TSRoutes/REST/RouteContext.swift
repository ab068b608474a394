import TSDomain
import TSHTTP
import TSJSON

/// What an authenticated handler gets: the pipeline's context, whose caller is now known, and
/// helpers to read input.
public struct RouteContext: Sendable {
    public let context: RequestContext
    public let user: PublicUser

    public var request: HTTPRequest { context.request }
    public var envelope: Envelope { context.envelope }

    /// The socket that made this request (`X-Socket-Id`), whose own room events are skipped.
    public var originSocketId: String? { context.originSocketId }

    public func param(_ name: String) -> String { context.param(name) }

    /// The JSON body as an `Input` (already checked against the route's documented schema by
    /// `RequestValidation`); 415 for another content type, 400 for anything but an object.
    public func input() throws -> Input { try context.input() }

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
