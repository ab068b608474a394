import TSContract
import TSDomain
import TSHTTP

/// Bearer-token authentication for `/api/**` (docs/api.md, "Conventions").
public struct Authenticator: Sendable {
    let auth: AuthService

    public init(auth: AuthService) { self.auth = auth }

    public func user(for request: HTTPRequest) async throws -> PublicUser {
        guard let token = BearerToken.parse(request.header("Authorization")) else {
            throw DomainError.unauthorized("Missing bearer token")
        }
        return try await auth.authenticate(token: token)
    }

    /// An authenticated route's handler behind the authentication step (`Authentication`): the
    /// handler gets the caller.
    public func wrap(_ handler: @escaping @Sendable (RouteContext) async throws -> HTTPResponse) -> ContextHandler {
        let step = Authentication(authenticator: self)
        return { context in
            try await step.handle(&context) { context in
                guard let user = context.user else { throw DomainError.unauthorized("Missing bearer token") }
                return try await handler(RouteContext(context: context, user: user))
            }
        }
    }

    /// A public route of the pipeline (register, login): only the error rendering.
    public static func unauthenticated(_ handler: @escaping @Sendable (RequestContext) async throws -> HTTPResponse) -> ContextHandler {
        return { context in
            do { return try await handler(context) } catch { throw APIError.wrap(error, envelope: context.envelope) }
        }
    }

    /// Wraps a public handler (register, login): only the error rendering.
    public static func open(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) -> HTTPHandler {
        return { request in
            do { return try await handler(request) } catch { throw APIError.wrap(error, envelope: Envelope.forPath(request.path)) }
        }
    }
}
