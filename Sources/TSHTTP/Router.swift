import Logging

/// An immutable route table (built by `RouterBuilder`).
public struct Router: HTTPResponder, Sendable {
    let routes: [RouterBuilder.Route]
    let logger: Logger
    /// Routes whose segments are all literals, by their path without the leading and trailing
    /// `/` (`api/auth/me`), as indices into `routes` in match order. See `resolve`.
    let literalRoutes: [Substring: [Int]]
    /// The GET routes with an immediate answer, by their exact path (`/health`). A request whose
    /// path is spelled another way (`/health/`) takes the async path, which answers it the same.
    let immediateRoutes: [ImmediateRoute]

    struct ImmediateRoute: Sendable {
        let path: String
        let handler: HTTPImmediateHandler
        /// No HEAD route shares the pattern, so HEAD is this GET (RFC 9110 §9.3.2) here too.
        let answersHead: Bool
    }

    init(routes: [RouterBuilder.Route], logger: Logger) {
        self.routes = routes
        self.logger = logger
        var literal: [Substring: [Int]] = [:]
        for (i, route) in routes.enumerated() {
            var key: [String] = []
            for segment in route.segments {
                guard case .literal(let l) = segment, !l.isEmpty else { key.removeAll(); break }
                key.append(l)
            }
            if key.count == route.segments.count { literal[Substring(key.joined(separator: "/")), default: []].append(i) }
        }
        literalRoutes = literal
        immediateRoutes = routes.compactMap { r in
            guard r.method == .GET, let handler = r.immediate else { return nil }
            return ImmediateRoute(path: r.pattern, handler: handler,
                                  answersHead: !routes.contains { $0.method == .HEAD && $0.segments == r.segments })
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
        var allowed: [HTTPMethod] = []
        var headFallback: (HTTPHandler, RouteParameters, String)?
        // A path equal to an all-literal pattern is owned by that pattern's routes and by no
        // other: nothing is more specific than a literal in each segment, and a route of the
        // same specificity that matches has the same segments. So `resolveByScan` would consider
        // exactly these routes, in this order; one hash lookup replaces it (no split, no
        // comparison per route). ASCII only: a non-ASCII path splits by `Character`s.
        if let key = Self.literalKey(path), let candidates = literalRoutes[key] {
            for i in candidates {
                let route = routes[i]
                if route.method == method { return .matched(handler: route.handler, parameters: RouteParameters(), pattern: route.pattern) }
                if method == .HEAD && route.method == .GET && headFallback == nil {
                    headFallback = (route.handler, RouteParameters(), route.pattern)
                }
                if !allowed.contains(route.method) { allowed.append(route.method) }
            }
            return Self.resolution(allowed: allowed, headFallback: headFallback)
        }
        return resolveByScan(method: method, path: path)
    }

    /// `resolve` by trying every route in order (the reference the literal lookup must agree
    /// with, RouterTests).
    func resolveByScan(method: HTTPMethod, path: String) -> Resolution {
        var allowed: [HTTPMethod] = []
        var headFallback: (HTTPHandler, RouteParameters, String)?
        var parts = Self.segments(path)
        if parts.first == "" { parts.removeFirst() }
        if parts.last == "" { parts.removeLast() }
        // The most specific matching pattern owns the path: a literal route shadows a parameter
        // route of the same shape for every method (`OPTIONS /api/rooms/my-rooms` is 405 with
        // `Allow: GET, HEAD`, not the methods of `/api/rooms/:roomId`). Routes are sorted by
        // specificity, so the first match sets the bar.
        var owner: [RouteSegment]?
        for route in routes {
            guard Router.fits(route.segments, parts), let params = Router.match(route.segments, parts) else { continue }
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
        return Self.resolution(allowed: allowed, headFallback: headFallback)
    }

    /// No route of the owning pattern has the method: HEAD's GET, else 405 with what it allows.
    private static func resolution(allowed: [HTTPMethod], headFallback: (HTTPHandler, RouteParameters, String)?) -> Resolution {
        if let (handler, params, pattern) = headFallback {
            return .matched(handler: handler, parameters: params, pattern: pattern)
        }
        if allowed.isEmpty { return .notFound }
        var allowed = allowed
        if allowed.contains(.GET) && !allowed.contains(.HEAD) { allowed.append(.HEAD) }
        return .methodNotAllowed(allow: allowed)
    }

    /// `path` without one leading and one trailing `/` (the segments `resolve` compares, joined),
    /// or nil when it is not all ASCII or has an empty segment (`//`: `a//b` and `a/b` must not
    /// meet, nor `//` and `/`).
    /// The bytes are read in place (`withContiguousStorageIfAvailable`: a native string's UTF-8),
    /// a plain loop over a buffer rather than the `UTF8View`'s indices (≈ 40 instructions a byte,
    /// two scans per request); a string without contiguous bytes resolves by the scan.
    static func literalKey(_ path: String) -> Substring? {
        let utf8 = path.utf8
        let plain = utf8.withContiguousStorageIfAvailable { b -> Bool in
            var previous: UInt8 = 0
            for c in b {
                if c >= 0x80 || (c == UInt8(ascii: "/") && previous == c) { return false }
                previous = c
            }
            return true
        }
        guard plain == true else { return nil }
        var start = utf8.startIndex, end = utf8.endIndex
        if start != end && utf8[start] == UInt8(ascii: "/") { start = utf8.index(after: start) }
        if start != end && utf8[utf8.index(before: end)] == UInt8(ascii: "/") { end = utf8.index(before: end) }
        return path[start..<end]
    }

    /// The path split at every `/` (empty segments kept). One scan over the UTF-8 bytes for an
    /// ASCII path, read in place as `literalKey` does (`split` over `Character`s cost ~47k
    /// instructions per request, bench/history/2026-11.md "Toggle under load, round 3"); a non-ASCII path
    /// (or one without contiguous bytes) goes through `characterSegments`, since a `/` followed by
    /// a combining mark is not a `Character` of its own.
    static func segments(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        let split = utf8.withContiguousStorageIfAvailable { b -> [Substring]? in
            var parts: [Substring] = []
            parts.reserveCapacity(8)
            var start = utf8.startIndex
            for i in 0..<b.count {
                let c = b[i]
                if c >= 0x80 { return nil }
                if c == UInt8(ascii: "/") {
                    let slash = utf8.index(utf8.startIndex, offsetBy: i)
                    parts.append(path[start..<slash])
                    start = utf8.index(after: slash)
                }
            }
            parts.append(path[start..<utf8.endIndex])
            return parts
        }
        return (split ?? nil) ?? characterSegments(path)
    }

    /// The reference split, over `Character`s.
    static func characterSegments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// Whether `match` would match: the same comparisons without building the parameters (no
    /// allocation, no percent-decoding). Most routes of the scan fail at a literal segment or by
    /// their length, after `match` had decoded the parameters before it (`/api/rooms/:roomId/…`
    /// for every route under a room); now only the routes that fit pay for their parameters.
    static func fits(_ segments: [RouteSegment], _ parts: [Substring]) -> Bool {
        var i = 0
        for segment in segments {
            switch segment {
            case .wildcard:
                return true
            case .literal(let lit):
                guard i < parts.count, parts[i] == lit else { return false }
            case .parameter:
                guard i < parts.count, !parts[i].isEmpty else { return false }
            }
            i += 1
        }
        return i == parts.count
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

    /// The answer of an immediate route (`RouterBuilder.get(_:immediate:_:)`) when its handler
    /// has one; nil for every other request (a string comparison per immediate route).
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard !immediateRoutes.isEmpty, request.method == .GET || request.method == .HEAD else { return nil }
        let path = request.path
        for route in immediateRoutes where route.path == path {
            guard request.method == .GET || route.answersHead else { return nil }
            var req = request
            req.routePattern = route.path
            guard var response = route.handler(req) else { return nil }
            if response.routePattern == nil { response.routePattern = route.path }
            return response
        }
        return nil
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
