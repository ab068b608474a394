import TSContract
import TSSync
import TSDomain
import TSHTTP

/// HTTP request counters and latency histograms by route pattern, method and status; an
/// `HTTPServerObserver`, so it is called on event-loop threads (one short lock per request).
/// Also keeps a per-second ring of the last `recentCapacity` seconds (request count, errors,
/// latency sum and max) for the inspector's rate/latency chart.
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

        mutating func record(_ seconds: Double) {
            if let i = HTTPMetrics.bucketBounds.firstIndex(where: { seconds <= $0 }) { buckets[i] += 1 }
            count += 1
            sum += seconds
        }
    }

    /// One second of traffic (Unix second `second`), for the inspector chart.
    public struct SecondSample: Sendable, Equatable {
        public var second: Int64
        public var requests: Int
        /// Responses with status >= 500.
        public var serverErrors: Int
        /// Responses with status 400..<500.
        public var clientErrors: Int
        public var latencySumNanoseconds: UInt64
        public var latencyMaxNanoseconds: UInt64
    }

    /// Seconds the per-second ring covers (10 minutes).
    public static let recentCapacity = 600
    /// Requests whose route pattern starts with this prefix are left out of the per-second ring
    /// (the inspector's own polling would otherwise dominate its chart); they still count in `/metrics`.
    public static let recentExcludedPrefix = "/inspector"

    struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [RouteKey: Histogram] = [:]
        var openConnections = 0
        var connectionsTotal: UInt64 = 0
        /// Slot `second % recentCapacity`; a slot whose `second` is stale counts as empty.
        var recent = [SecondSample](repeating: SecondSample(second: -1, requests: 0, serverErrors: 0, clientErrors: 0,
                                                            latencySumNanoseconds: 0, latencyMaxNanoseconds: 0),
                                    count: HTTPMetrics.recentCapacity)
    }

    private let state = LockedValue(State())
    private let clock: any WallClock

    /// `clock` stamps the per-second ring (injected by tests).
    public init(clock: any WallClock = SystemWallClock()) { self.clock = clock }

    public func requestFinished(method: HTTPMethod, routePattern: String?, status: Int, durationNanoseconds: UInt64) {
        let seconds = Double(durationNanoseconds) / 1e9
        let m = method.rawValue  // the same text as "\(method)", without an interpolation per request
        let now: Int64? = routePattern?.hasPrefix(Self.recentExcludedPrefix) == true ? nil : clock.nowSeconds()
        state.withLock { s in
            // One lookup per table, each histogram updated where it lies (`default:` modifies in
            // place; reading it out and storing it back copied its buckets on every request). The
            // series bound is looked up only once the table is full.
            var key = RouteKey(method: m, route: routePattern ?? "unmatched")
            if s.latency.count >= Self.maxSeries && s.latency[key] == nil { key = RouteKey(method: m, route: "other") }
            s.requests[RequestKey(method: m, route: key.route, status: status), default: 0] += 1
            s.latency[key, default: Histogram()].record(seconds)

            guard let now else { return }
            let i = Int(now % Int64(Self.recentCapacity))
            if s.recent[i].second != now {
                s.recent[i] = SecondSample(second: now, requests: 0, serverErrors: 0, clientErrors: 0, latencySumNanoseconds: 0, latencyMaxNanoseconds: 0)
            }
            s.recent[i].requests += 1
            if status >= 500 { s.recent[i].serverErrors += 1 } else if status >= 400 { s.recent[i].clientErrors += 1 }
            s.recent[i].latencySumNanoseconds &+= durationNanoseconds
            s.recent[i].latencyMaxNanoseconds = max(s.recent[i].latencyMaxNanoseconds, durationNanoseconds)
        }
    }

    public func connectionOpened() { state.withLock { $0.openConnections += 1; $0.connectionsTotal += 1 } }
    public func connectionClosed() { state.withLock { $0.openConnections -= 1 } }

    /// The last `seconds` seconds (at most `recentCapacity`), oldest first, ending with the current
    /// second; seconds without requests are present with zero counts.
    public func recent(seconds: Int) -> [SecondSample] {
        let n = min(max(1, seconds), Self.recentCapacity)
        let now = clock.nowSeconds()
        return state.withLock { s in
            (0..<n).map { k in
                let second = now - Int64(n - 1 - k)
                let slot = s.recent[Int(second % Int64(Self.recentCapacity))]
                return slot.second == second ? slot
                    : SecondSample(second: second, requests: 0, serverErrors: 0, clientErrors: 0, latencySumNanoseconds: 0, latencyMaxNanoseconds: 0)
            }
        }
    }

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
        out.single("touchsync_http_connections_open", type: "gauge", help: "Open HTTP connections (not counting ones upgraded to WebSocket).",
                   Double(s.openConnections))
        out.single("touchsync_http_connections_total", type: "counter", help: "HTTP connections accepted.", Double(s.connectionsTotal))
    }
}
