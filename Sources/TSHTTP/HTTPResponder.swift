/// A request handler signature.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// A handler that answers without suspending when it can, on the thread that parsed the request,
/// and returns nil when it cannot (the route's `HTTPHandler` then answers). It must not block:
/// it runs on the event loop.
public typealias HTTPImmediateHandler = @Sendable (HTTPRequest) -> HTTPResponse?

/// Anything that answers requests (the router, middleware chains). Never throws: errors are
/// rendered into responses.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest) async -> HTTPResponse

    /// The answer when it is known without suspending, else nil (then `respond` is called). The
    /// connection handler asks this first: an answer here costs no task (its allocation, its
    /// async frames and its hand-back to the loop were about a quarter of a `/health` request's
    /// instructions, bench/RESULTS.md).
    func respondImmediately(to request: HTTPRequest) -> HTTPResponse?
}

extension HTTPResponder {
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? { nil }
}

/// Adapts a closure to `HTTPResponder`.
public struct ClosureResponder: HTTPResponder {
    let body: @Sendable (HTTPRequest) async -> HTTPResponse
    public init(_ body: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) { self.body = body }
    public func respond(to request: HTTPRequest) async -> HTTPResponse { await body(request) }
}
