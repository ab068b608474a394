import TSHTTP

/// The one chain of middleware in front of every route handler, in this order:
///
/// 1. `RequestValidation.Check`: the request against the route's documented OpenAPI operation
///    (400/415 before the handler; the parsed body into `RequestContext.body`).
/// 2. `TestModeAccess` (test mode, `/api/test/*` only): who may drive the test routes.
/// 3. `FlushAfterWrites` (test mode, `/api/**` changes): a write's answer waits for its events.
/// 4. The route's handler; an authenticated one runs behind `Authenticator`, which puts the
///    caller into the context.
///
/// Each route gets only the steps that apply to it, decided once when the routes are frozen
/// (`chain(_:_:)`): a route with none (`/health`, `/metrics`) keeps its handler as registered.
/// Around the router rather than a route, with the same `RouteMiddleware` protocol
/// (`MiddlewareResponder`): the inspector's recorder (`InspectorRequestRecorder`), which also
/// records 404s and 405s. Below the responder, in the connection handler, and so not middleware:
/// the access log and `X-Request-Id`, and the HTTP metrics (`HTTPMetrics`, an
/// `HTTPServerObserver`), which also count what never reaches a responder (a request the parser
/// refused, a timeout).
public struct RequestPipeline: Sendable {
    public typealias Chain = MiddlewarePair<RequestValidation.Check?, MiddlewarePair<TestModeAccess?, FlushAfterWrites?>>

    let authenticator: Authenticator
    let testAccess: TestModeAccess?
    let afterWrites: FlushAfterWrites?

    public init(authenticator: Authenticator, testAccess: TestModeAccess? = nil, afterWrites: FlushAfterWrites? = nil) {
        self.authenticator = authenticator
        self.testAccess = testAccess
        self.afterWrites = afterWrites
    }

    static func key(_ method: HTTPMethod, _ pattern: String) -> String { "\(method) \(pattern)" }

    /// The steps that apply to (method, pattern); nil when none does.
    func chain(_ method: HTTPMethod, _ pattern: String) -> Chain? {
        let validation = RequestValidation.check(method, pattern, authenticator: authenticator)
        let access = testAccess.flatMap { TestModeAccess.guards(pattern) ? $0 : nil }
        let flush = afterWrites.flatMap { FlushAfterWrites.applies(method, pattern) ? $0 : nil }
        if validation == nil && access == nil && flush == nil { return nil }
        return MiddlewarePair(validation, MiddlewarePair(access, flush))
    }

    /// `route` behind its chain, as the router calls it.
    func handler(_ method: HTTPMethod, _ pattern: String, _ route: @escaping ContextHandler) -> HTTPHandler {
        guard let chain = chain(method, pattern) else {
            return { request in
                var context = RequestContext(request: request)
                return try await route(&context)
            }
        }
        return { request in
            var context = RequestContext(request: request)
            return try await chain.handle(&context, next: route)
        }
    }

    /// Adds the routes of `table` to `router`, each behind its chain.
    public func mount(_ table: RouteTable, into router: inout RouterBuilder) {
        for r in table.routes { router.add(r.method, r.pattern, handler(r.method, r.pattern, r.handler)) }
    }

    /// Puts the chain in front of every other route of `router` (registered with a plain
    /// `HTTPHandler`, whoever registered it); the routes of `mounted` already have theirs.
    public func install(into router: inout RouterBuilder, mounted: RouteTable) {
        let skip = mounted.keys
        router.wrapHandlers { method, pattern, handler in
            guard !skip.contains(Self.key(method, pattern)), let chain = chain(method, pattern) else { return nil }
            return { request in
                var context = RequestContext(request: request)
                return try await chain.handle(&context) { context in try await handler(context.request) }
            }
        }
    }
}

/// Test mode: a change's answer on `/api/**` waits until the events it published have left
/// (docs/realtime.md "Order": events leave after the answer, in commit order), so the test that
/// made it finds them in `/api/test/events`.
public struct FlushAfterWrites: RouteMiddleware {
    let flush: @Sendable () async -> Void

    public init(flush: @escaping @Sendable () async -> Void) { self.flush = flush }

    static func applies(_ method: HTTPMethod, _ pattern: String) -> Bool {
        method != .GET && method != .HEAD && pattern.hasPrefix("/api/")
    }

    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        let response = try await next(&context)
        await flush()
        return response
    }
}
