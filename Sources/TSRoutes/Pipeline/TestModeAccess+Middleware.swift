import TSHTTP

/// The access check as a step of the request pipeline (`RequestPipeline`), in front of every
/// `/api/test/*` route.
extension TestModeAccess: RouteMiddleware {
    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        let decision = check(context.request)
        switch decision {
        case .allowed: return try await next(&context)
        case .wrongToken: return .json(Envelope.standard.errorBody(code: "UNAUTHORIZED", message: Self.message(decision)), status: 401)
        default: return .json(Envelope.standard.errorBody(code: "FORBIDDEN", message: Self.message(decision)), status: 403)
        }
    }
}
