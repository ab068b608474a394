import TSHTTP

/// Routes whose handlers read what the pipeline established (`RequestContext`), collected
/// before `RequestPipeline.mount` puts each one, behind its own chain, into the router.
public struct RouteTable: Sendable {
    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let handler: ContextHandler
    }

    var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping ContextHandler) {
        routes.append(Route(method: method, pattern: pattern, handler: handler))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping ContextHandler) { add(.GET, pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping ContextHandler) { add(.POST, pattern, handler) }
    public mutating func put(_ pattern: String, _ handler: @escaping ContextHandler) { add(.PUT, pattern, handler) }
    public mutating func patch(_ pattern: String, _ handler: @escaping ContextHandler) { add(.PATCH, pattern, handler) }
    public mutating func delete(_ pattern: String, _ handler: @escaping ContextHandler) { add(.DELETE, pattern, handler) }

    /// Every (method, pattern) of the table, as `RequestPipeline.key` spells it.
    var keys: Set<String> { Set(routes.map { RequestPipeline.key($0.method, $0.pattern) }) }
}
