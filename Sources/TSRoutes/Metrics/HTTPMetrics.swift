import TSHTTP

/// HTTP request counters and latency histograms by route pattern, method and status; an
/// `HTTPServerObserver`, so it is called on event-loop threads (one short lock per request).
public final class HTTPMetrics: HTTPServerObserver, Sendable {
    /// Upper bounds (seconds) of the latency histogram buckets (Prometheus defaults, plus 1 ms).
    public static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Distinct (method, route) series kept; requests past it count under route `"other"`.
    public static let maxSeries = 1000

    struct RequestKey: Hashable, Comparable {
        let method: String
        let route: String
        let status: Int
        static func < (a: Self, b: Self) -> Bool { (a.route, a.method, a.status) < (b.route, b.method, b.status) }
    }

    struct RouteKey: Hashable, Comparable {
        let method: String
        let route: String
        static func < (a: Self, b: Self) -> Bool { (a.route, a.method) < (b.route, b.method) }
    }

    struct Histogram {
        var buckets = [UInt64](repeating: 0, count: HTTPMetrics.bucketBounds.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }

    struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [RouteKey: Histogram] = [:]
        var openConnections = 0
        var connectionsTotal: UInt64 = 0
    }

    private let state = LockedBox(State())

    public init() {}

    public func requestFinished(method: HTTPMethod, routePattern: String?, status: Int, durationNanoseconds: UInt64) {
        let seconds = Double(durationNanoseconds) / 1e9
        let m = "\(method)"
        state.withLock { s in
            var route = routePattern ?? "unmatched"
            if s.latency[RouteKey(method: m, route: route)] == nil && s.latency.count >= Self.maxSeries { route = "other" }
            s.requests[RequestKey(method: m, route: route, status: status), default: 0] += 1
            var h = s.latency[RouteKey(method: m, route: route)] ?? Histogram()
            if let i = Self.bucketBounds.firstIndex(where: { seconds <= $0 }) { h.buckets[i] += 1 }
            h.count += 1
            h.sum += seconds
            s.latency[RouteKey(method: m, route: route)] = h
        }
    }

    public func connectionOpened() { state.withLock { $0.openConnections += 1; $0.connectionsTotal += 1 } }
    public func connectionClosed() { state.withLock { $0.openConnections -= 1 } }

    /// Writes this registry's families.
    func render(into out: inout PrometheusText) {
        let s = state.withLock { $0 }
        out.family("touchsync_http_requests_total", type: "counter", help: "HTTP requests answered, by route pattern, method and status.")
        for (k, v) in s.requests.sorted(by: { $0.key < $1.key }) {
            out.sample("touchsync_http_requests_total", ["route": k.route, "method": k.method, "status": String(k.status)], Double(v))
        }
        out.family("touchsync_http_request_duration_seconds", type: "histogram",
                   help: "Time from a complete request head to the response being queued, by route pattern and method.")
        for (k, h) in s.latency.sorted(by: { $0.key < $1.key }) {
            let labels = ["route": k.route, "method": k.method]
            var cumulative: UInt64 = 0
            for (i, bound) in Self.bucketBounds.enumerated() {
                cumulative += h.buckets[i]
                out.sample("touchsync_http_request_duration_seconds_bucket", labels.merging(["le": PrometheusText.format(bound)]) { a, _ in a },
                           Double(cumulative))
            }
            out.sample("touchsync_http_request_duration_seconds_bucket", labels.merging(["le": "+Inf"]) { a, _ in a }, Double(h.count))
            out.sample("touchsync_http_request_duration_seconds_sum", labels, h.sum)
            out.sample("touchsync_http_request_duration_seconds_count", labels, Double(h.count))
        }
        out.family("touchsync_http_connections_open", type: "gauge", help: "Open HTTP connections (not counting ones upgraded to WebSocket).")
        out.sample("touchsync_http_connections_open", [:], Double(s.openConnections))
        out.family("touchsync_http_connections_total", type: "counter", help: "HTTP connections accepted.")
        out.sample("touchsync_http_connections_total", [:], Double(s.connectionsTotal))
    }
}
