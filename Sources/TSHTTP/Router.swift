import Logging

/// An immutable route table (built by `RouterBuilder`).
public struct Router: HTTPResponder, Sendable {
    let routes: [RouterBuilder.Route]
    /// `routes` that can match a path of `n` segments (`byLength[n]`; the last entry serves every
    /// longer path): those of exactly `n` segments and those whose wildcard starts at or before
    /// `n`, in the same priority order. A request is matched against these only, so a toggle no
    /// longer tries (and percent-decodes the parameters of) every route of the table
    /// (issue 14 item 1, bench/RESULTS.md "Toggle under load, round 3").
    let byLength: [[RouterBuilder.Route]]
    let logger: Logger

    init(routes: [RouterBuilder.Route], logger: Logger) {
        self.routes = routes
        self.logger = logger
        let longest = routes.map(\.segments.count).max() ?? 0
        byLength = (0...(longest + 1)).map { n in
            routes.filter { route in
                if let w = route.segments.firstIndex(of: .wildcard) { return n >= w }
                return route.segments.count == n
            }
        }
    }

    /// The outcome of matching a method and path.
    public enum Resolution: Sendable {
        case matched(handler: HTTPHandler, parameters: RouteParameters, pattern: String)
        case notFound
        case methodNotAllowed(allow: [HTTPMethod])
    }

    /// Every registered (method, pattern), in match-priority order.
    public var registeredRoutes: [(method: HTTPMethod, pattern: String)] { routes.map { ($0.method, $0.pattern) } }

    /// Resolves `method` + `path` (no query). HEAD falls back to GET (RFC 9110 §9.3.2).
    public func resolve(method: HTTPMethod, path: String) -> Resolution {
        resolve(method: method, path: path, scanningAll: false)
    }

    /// `scanningAll`: match against the whole table (the reference the length index is tested against).
    func resolve(method: HTTPMethod, path: String, scanningAll: Bool) -> Resolution {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.first == "" { parts.removeFirst() }
        if parts.last == "" { parts.removeLast() }

        var allowed: [HTTPMethod] = []
        var headFallback: (HTTPHandler, RouteParameters, String)?
        // The most specific matching pattern owns the path: a literal route shadows a parameter
        // route of the same shape for every method (`OPTIONS /api/rooms/my-rooms` is 405 with
        // `Allow: GET, HEAD`, not the methods of `/api/rooms/:roomId`). Routes are sorted by
        // specificity, so the first match sets the bar.
        var owner: [RouteSegment]?
        for route in scanningAll ? routes : byLength[min(parts.count, byLength.count - 1)] {
            guard let params = Router.match(route.segments, parts) else { continue }
            if let owner {
                if RouteSegment.compareSpecificity(owner, route.segments) != 0 { break }
            } else {
                owner = route.segments
            }
            if route.method == method {
                return .matched(handler: route.handler, parameters: params, pattern: route.pattern)
            }
            if method == .HEAD && route.method == .GET && headFallback == nil {
                headFallback = (route.handler, params, route.pattern)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if let (handler, params, pattern) = headFallback {
            return .matched(handler: handler, parameters: params, pattern: pattern)
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains(.GET) && !allowed.contains(.HEAD) { allowed.append(.HEAD) }
        return .methodNotAllowed(allow: allowed)
    }

    static func match(_ segments: [RouteSegment], _ parts: [Substring]) -> RouteParameters? {
        var params = RouteParameters()
        var i = 0
        for segment in segments {
            switch segment {
            case .wildcard:
                params.set("*", parts[min(i, parts.count)...].joined(separator: "/"))
                return params
            case .literal(let lit):
                guard i < parts.count, parts[i] == lit else { return nil }
            case .parameter(let name):
                guard i < parts.count, !parts[i].isEmpty else { return nil }
                params.set(name, percentDecode(parts[i], plusAsSpace: false))
            }
            i += 1
        }
        return i == parts.count ? params : nil
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        switch resolve(method: request.method, path: request.path) {
        case .matched(let handler, let parameters, let pattern):
            var req = request
            req.parameters = parameters
            req.routePattern = pattern
            var response: HTTPResponse
            do {
                response = try await handler(req)
            } catch {
                response = HTTPResponse.from(error: error, request: req, logger: logger)
            }
            if response.routePattern == nil { response.routePattern = pattern }
            return response
        case .notFound:
            return HTTPError.notFound("No route for \(request.method) \(request.path)").response(for: request)
        case .methodNotAllowed(let allow):
            return HTTPError.methodNotAllowed(allow: allow).response(for: request)
        }
    }
}
