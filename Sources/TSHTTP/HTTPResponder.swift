/// A request handler signature.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// Anything that answers requests (the router, middleware chains). Never throws: errors are
/// rendered into responses.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest) async -> HTTPResponse
}

/// Adapts a closure to `HTTPResponder`.
public struct ClosureResponder: HTTPResponder {
    let body: @Sendable (HTTPRequest) async -> HTTPResponse
    public init(_ body: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) { self.body = body }
    public func respond(to request: HTTPRequest) async -> HTTPResponse { await body(request) }
}
