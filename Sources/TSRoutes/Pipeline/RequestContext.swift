import TSDomain
import TSHTTP
import TSJSON

/// What the request pipeline has established about one request, handed from each middleware to
/// the next and to the route's handler: the request, the error envelope of its route family, the
/// body the validation checked (parsed once per request), and the caller once authenticated.
/// A value type, passed `inout` down the chain: no allocation per request, nothing held in
/// task-local storage.
public struct RequestContext: Sendable {
    public var request: HTTPRequest
    /// The error/success envelope of the route family (`/api/**` or the mobile routes).
    public let envelope: Envelope
    /// What `RequestValidation` took from the body: `.tree(nil)` until it ran, and for a route
    /// that documents no body.
    public var body: RequestValidation.ValidatedBody = .tree(nil)
    /// The caller, once authentication established it (`Authenticator`).
    public var user: PublicUser?

    public init(request: HTTPRequest) {
        self.request = request
        envelope = Envelope.forPath(request.path)
    }

    /// The `X-Request-Id` the response echoes (assigned by the connection handler).
    public var requestID: String { request.requestID }

    /// The JSON body: the one the validation parsed, or parsed now (a route without a documented
    /// schema, or one whose body the fast reader took as ranges).
    public func jsonBody() throws -> JSONValue {
        if case .tree(let tree?) = body { return tree }
        return try request.jsonBody()
    }

    /// The body as an `Input` (already checked against the route's documented schema);
    /// 415 for another content type, 400 for anything but an object.
    public func input() throws -> Input { try Input(value: jsonBody()) }

    /// The socket that made this request (`X-Socket-Id`), whose own room events are skipped.
    /// Longer than 64 characters is refused with 400 before the handler runs (`RequestValidation`).
    public var originSocketId: String? {
        guard let s = request.header("X-Socket-Id"), !s.isEmpty, s.utf8.count <= 64 else { return nil }
        return s
    }

    public func param(_ name: String) -> String { request.parameters[name] ?? "" }
}

/// A route's handler: it reads what the pipeline established from the context.
public typealias ContextHandler = @Sendable (inout RequestContext) async throws -> HTTPResponse
