import Logging
import TSHTTP

/// Steps that stand around the router rather than a route (Hummingbird's router-level
/// middleware): they see every request, those no route answers (404, 405) included. The router
/// renders every error into a response, so `next` never throws here.
public struct MiddlewareResponder<Middleware: RouteMiddleware, Inner: HTTPResponder>: HTTPResponder {
    let middleware: Middleware
    let inner: Inner

    public init(_ middleware: Middleware, around inner: Inner) {
        self.middleware = middleware
        self.inner = inner
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        // Decided per request without building the context: the probes polled every few
        // seconds (/health, /metrics) go straight to the router.
        guard middleware.applies(to: request) else { return await inner.respond(to: request) }
        var context = RequestContext(request: request)
        // The closure captures `inner` alone: capturing `self` made this unspecialized generic
        // code look up `MiddlewareResponder<…>`'s metadata in the runtime's cache on every request.
        let inner = self.inner
        do {
            return try await middleware.handle(&context) { context in await inner.respond(to: context.request) }
        } catch {
            return HTTPResponse.from(error: error, request: request, logger: Self.logger)
        }
    }

    /// The inner answer when the middleware does not apply to the request (it would be skipped
    /// on the async path too); nil when it applies, so it runs.
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard !middleware.applies(to: request) else { return nil }
        return inner.respondImmediately(to: request)
    }

    static var logger: Logger { Logger(label: "touchsync.http") }
}
