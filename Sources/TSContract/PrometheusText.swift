/// A writer of the Prometheus text exposition format, version 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): `# HELP`/`# TYPE` per family,
/// then `name{label="value",…} value` lines, label values escaped (`\`, `"`, newline).
public struct PrometheusText: Sendable {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public private(set) var text = ""

    public init() {}

    public mutating func family(_ name: String, type: String, help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// One sample; labels are written sorted by name (`le` last, as is customary).
    public mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
        text += name
        if !labels.isEmpty {
            let keys = labels.keys.sorted { a, b in a == "le" ? false : b == "le" ? true : a < b }
            text += "{" + keys.map { "\($0)=\"\(Self.escape(labels[$0]!))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A gauge or counter family with one sample per value of one label, in the order given:
    /// `family("x_total", type: "counter", help: …, by: "outcome", [("ok", 3), ("failed", 1)])`
    /// writes `x_total{outcome="ok"} 3` and `x_total{outcome="failed"} 1`.
    public mutating func family(_ name: String, type: String, help: String, by label: String, _ samples: [(String, Double)]) {
        family(name, type: type, help: help)
        for (value, v) in samples { sample(name, [label: value], v) }
    }

    /// A gauge or counter family with a single unlabelled sample.
    public mutating func single(_ name: String, type: String, help: String, _ value: Double) {
        family(name, type: type, help: help)
        sample(name, [:], value)
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }

    /// Integers without a fraction; others in Swift's shortest round-trip form.
    public static func format(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return "\(v)"
    }
}
