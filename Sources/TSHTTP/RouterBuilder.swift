import Logging

/// Collects routes, then `freeze()`s them into an immutable `Router`.
///
/// Patterns: literal segments, `:name` parameters (one non-empty segment, percent-decoded) and a
/// trailing `*` wildcard that matches zero or more remaining segments (`/socket.io/*` matches
/// `/socket.io`, `/socket.io/` and `/socket.io/x/y`; the rest is in parameter `"*"`).
public struct RouterBuilder: Sendable {
    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let segments: [RouteSegment]
        let handler: HTTPHandler
        /// Tried before `handler` on the loop (`Router.respondImmediately`); all-literal patterns only.
        var immediate: HTTPImmediateHandler? = nil
        let order: Int
    }

    var routes: [Route] = []

    public init() {}

    /// Registers `handler` for `method` on `pattern`.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping HTTPHandler) {
        append(method, pattern, RouteSegment.parse(pattern), handler, immediate: nil)
    }

    private mutating func append(_ method: HTTPMethod, _ pattern: String, _ segments: [RouteSegment], _ handler: @escaping HTTPHandler,
                                 immediate: HTTPImmediateHandler?) {
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler, immediate: immediate, order: routes.count))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.GET, pattern, handler) }

    /// Registers a GET route whose answer `immediate` gives without suspending when it can (nil:
    /// `handler` answers). `pattern` has literal segments only. Installing middleware in front of
    /// the route (`wrapHandlers` replacing its handler) drops `immediate`: the middleware must run.
    public mutating func get(_ pattern: String, immediate: @escaping HTTPImmediateHandler, _ handler: @escaping HTTPHandler) {
        let segments = RouteSegment.parse(pattern)
        precondition(segments.allSatisfy { if case .literal(let l) = $0 { return !l.isEmpty } else { return false } },
                     "an immediate route has literal segments only: \(pattern)")
        append(.GET, pattern, segments, handler, immediate: immediate)
    }
    public mutating func head(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.HEAD, pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.POST, pattern, handler) }
    public mutating func put(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.PUT, pattern, handler) }
    public mutating func patch(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.PATCH, pattern, handler) }
    public mutating func delete(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.DELETE, pattern, handler) }
    public mutating func options(_ pattern: String, _ handler: @escaping HTTPHandler) { add(.OPTIONS, pattern, handler) }

    /// Replaces each route's handler with `transform(method, pattern, handler)` where it returns
    /// one (nil keeps the route as it is): the steps that belong in front of every handler
    /// (`TSRoutes.RequestPipeline`: request validation against the route's documented schema,
    /// test-mode access) are installed once, not repeated in each handler. A replaced route loses
    /// its immediate answer, which would skip those steps.
    public mutating func wrapHandlers(_ transform: (_ method: HTTPMethod, _ pattern: String, _ handler: @escaping HTTPHandler) -> HTTPHandler?) {
        routes = routes.map { r in
            guard let wrapped = transform(r.method, r.pattern, r.handler) else { return r }
            return Route(method: r.method, pattern: r.pattern, segments: r.segments, handler: wrapped, order: r.order)
        }
    }

    /// An immutable router. More specific patterns win regardless of registration order
    /// (literal > parameter > end of pattern > wildcard, segment by segment).
    public func freeze(logger: Logger = Logger(label: "touchsync.http.router")) -> Router {
        let sorted = routes.sorted { a, b in
            let c = RouteSegment.compareSpecificity(a.segments, b.segments)
            return c != 0 ? c > 0 : a.order < b.order
        }
        return Router(routes: sorted, logger: logger)
    }
}

enum RouteSegment: Sendable, Equatable {
    case literal(String)
    case parameter(String)
    case wildcard

    static func parse(_ pattern: String) -> [RouteSegment] {
        var parts = pattern.split(separator: "/", omittingEmptySubsequences: false)
        if parts.first == "" { parts.removeFirst() }
        if parts.last == "" { parts.removeLast() }
        var out: [RouteSegment] = []
        for (i, part) in parts.enumerated() {
            if part == "*" {
                precondition(i == parts.count - 1, "`*` must be the last segment of a route pattern: \(pattern)")
                out.append(.wildcard)
            } else if part.hasPrefix(":") && part.count > 1 {
                out.append(.parameter(String(part.dropFirst())))
            } else {
                out.append(.literal(String(part)))
            }
        }
        return out
    }

    private var rank: Int {
        switch self {
        case .literal: return 3
        case .parameter: return 2
        case .wildcard: return 0
        }
    }

    /// > 0 when `a` is more specific than `b`.
    static func compareSpecificity(_ a: [RouteSegment], _ b: [RouteSegment]) -> Int {
        let n = max(a.count, b.count)
        for i in 0..<n {
            let ra = i < a.count ? a[i].rank : 1
            let rb = i < b.count ? b[i].rank : 1
            if ra != rb { return ra - rb }
        }
        return 0
    }
}
