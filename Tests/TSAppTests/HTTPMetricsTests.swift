import TSContract
import TSHTTP
@testable import TSRoutes
import XCTest

/// The request counters and latency histograms behind `/metrics` (HTTPMetrics): every request is
/// counted once under its route, and past `maxSeries` (method, route) series a new one counts under
/// route "other" while the known ones keep counting.
final class HTTPMetricsTests: XCTestCase {
    func text(_ metrics: HTTPMetrics) -> String {
        var out = PrometheusText()
        metrics.render(into: &out)
        return out.text
    }

    func testEachRequestIsCountedOnceInItsSeries() {
        let metrics = HTTPMetrics()
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 200, durationNanoseconds: 500_000)
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 200, durationNanoseconds: 3_000_000)
        metrics.requestFinished(method: .GET, routePattern: "/health", status: 503, durationNanoseconds: 20_000_000)
        metrics.requestFinished(method: .POST, routePattern: nil, status: 404, durationNanoseconds: 1_000)
        let t = text(metrics)
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="GET",route="/health",status="200"} 2"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="GET",route="/health",status="503"} 1"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="POST",route="unmatched",status="404"} 1"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_bucket{method="GET",route="/health",le="0.001"} 1"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_bucket{method="GET",route="/health",le="0.005"} 2"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_bucket{method="GET",route="/health",le="+Inf"} 3"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_count{method="GET",route="/health"} 3"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_sum{method="GET",route="/health"} 0.0235"#), t)
    }

    func testSeriesPastTheBoundCountUnderOther() {
        let metrics = HTTPMetrics()
        for i in 0..<HTTPMetrics.maxSeries {
            metrics.requestFinished(method: .GET, routePattern: "/r\(i)", status: 200, durationNanoseconds: 1_000)
        }
        metrics.requestFinished(method: .GET, routePattern: "/new", status: 200, durationNanoseconds: 1_000)
        metrics.requestFinished(method: .GET, routePattern: "/newer", status: 404, durationNanoseconds: 1_000)
        metrics.requestFinished(method: .GET, routePattern: "/r7", status: 200, durationNanoseconds: 1_000)
        let t = text(metrics)
        XCTAssertFalse(t.contains(#"route="/new""#))
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="GET",route="other",status="200"} 1"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="GET",route="other",status="404"} 1"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_count{method="GET",route="other"} 2"#), t)
        XCTAssertTrue(t.contains(#"touchsync_http_requests_total{method="GET",route="/r7",status="200"} 2"#), "a known series keeps counting")
        XCTAssertTrue(t.contains(#"touchsync_http_request_duration_seconds_count{method="GET",route="/r7"} 2"#))
    }
}
