import TSContract
import XCTest

/// The exposition writer's own bytes (what `GET /metrics` is made of): HELP and TYPE, then the
/// samples, label values escaped.
final class PrometheusTextTests: XCTestCase {
    func testAFamilyByOneLabelWritesOneSamplePerValueInTheOrderGiven() {
        var out = PrometheusText()
        out.family("x_total", type: "counter", help: "Xs by outcome.", by: "outcome", [("ok", 3), ("failed", 0.5), ("say \"hi\"", 0)])
        XCTAssertEqual(out.text, """
            # HELP x_total Xs by outcome.
            # TYPE x_total counter
            x_total{outcome="ok"} 3
            x_total{outcome="failed"} 0.5
            x_total{outcome="say \\"hi\\""} 0

            """)
    }

    func testASingleSampleFamilyHasNoLabels() {
        var out = PrometheusText()
        out.single("up", type: "gauge", help: "1 while up.", 1)
        XCTAssertEqual(out.text, "# HELP up 1 while up.\n# TYPE up gauge\nup 1\n")
    }
}
