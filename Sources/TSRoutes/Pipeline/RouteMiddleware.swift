import TSHTTP

/// One concern in front of a route's handler (the model is Hummingbird's `MiddlewareProtocol`):
/// it may answer itself, or call `next` with the context, having added to it what it established.
///
/// Chains are composed once, when the routes are frozen, as nested generic values
/// (`MiddlewarePair`), so a request walks statically dispatched calls: no array of existential
/// middleware, no closure allocated per request (`next` is non-escaping).
public protocol RouteMiddleware: Sendable {
    func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse

    /// Whether `handle` has anything to do for `request`. A step around the whole router
    /// (`MiddlewareResponder`) that answers false is skipped entirely for that request: no
    /// context, no extra async frame. Route chains leave unneeded steps out when they are frozen.
    func applies(to request: HTTPRequest) -> Bool
}

extension RouteMiddleware {
    @inlinable
    public func applies(to request: HTTPRequest) -> Bool { true }
}

/// `outer` in front of `inner`.
public struct MiddlewarePair<Outer: RouteMiddleware, Inner: RouteMiddleware>: RouteMiddleware {
    public let outer: Outer
    public let inner: Inner

    public init(_ outer: Outer, _ inner: Inner) {
        self.outer = outer
        self.inner = inner
    }

    @inlinable
    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        try await outer.handle(&context) { context in try await inner.handle(&context, next: next) }
    }
}

/// A middleware that a route does not need (nil) passes the request straight on: each route's
/// chain has the same shape and holds only the steps that apply to it.
extension Optional: RouteMiddleware where Wrapped: RouteMiddleware {
    @inlinable
    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        guard let m = self else { return try await next(&context) }
        return try await m.handle(&context, next: next)
    }
}
