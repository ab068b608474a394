// GET /health on 127.0.0.1:PORT (first argument, default 3902) with Hummingbird 2.
//
// The body has the fields and roughly the size of TouchSync's own /health
// (Sources/TSRoutes/REST/OperationsRoutes.swift: status, version, uptimeSeconds, database;
// 67 bytes), encoded per request from a Codable value the way a Hummingbird app answers JSON, so
// both servers do the same HTTP work per request. TouchSync's /health does one thing more: a
// `SELECT 1` on an idle database reader (Database.health in Sources/TSStorage/Database.swift).
import Foundation
import Hummingbird
import Logging

struct Health: ResponseEncodable {
    let status: String
    let version: String
    let uptimeSeconds: Int
    let database: String
}

let port = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 3902
let started = Date()
let router = Router()
router.get("/health") { _, _ -> Health in
    Health(status: "ok", version: "0.1.0", uptimeSeconds: Int(Date().timeIntervalSince(started)), database: "ok")
}
var logger = Logger(label: "hummingbird-health")
logger.logLevel = .warning  // no line per request, as the TouchSync server runs in bench/
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
try await app.runService()
