import TSDomain
import TSHTTP

/// The authentication step of the request pipeline, in front of the handler of a route that
/// needs a bearer token (`Authenticator.wrap`): 401 without a valid one; the caller goes into
/// `RequestContext.user` and the access log; domain errors are rendered in the envelope of the
/// route family, here, so the access log still names the caller.
public struct Authentication: RouteMiddleware {
    let authenticator: Authenticator

    public init(authenticator: Authenticator) { self.authenticator = authenticator }

    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        do {
            let user = try await authenticator.user(for: context.request)
            context.user = user
            var response = try await next(&context)
            response.logUserID = user.id
            return response
        } catch {
            guard let rendered = APIError.wrap(error, envelope: context.envelope) as? any HTTPResponseConvertibleError else { throw error }
            var response = rendered.response(for: context.request)
            response.logUserID = context.user?.id
            return response
        }
    }
}
