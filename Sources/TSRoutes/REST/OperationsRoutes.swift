import Dispatch
import TSDomain
import TSHTTP
import TSJSON

/// `GET /health` (CONTRACT.md §2 "Operations"); no auth.
public struct OperationsRoutes: Sendable {
    let domain: TouchSyncDomain
    let version: String
    let startedAt: UInt64

    public init(domain: TouchSyncDomain, version: String) {
        self.domain = domain
        self.version = version
        startedAt = DispatchTime.now().uptimeNanoseconds
    }

    public func register(into router: inout RouterBuilder) {
        let domain = self.domain
        let version = self.version
        let startedAt = self.startedAt
        router.get("/health") { _ in
            // Never queues behind busy readers: a busy pool is a working database (Database.health).
            let dbOK = await domain.db.ping()
            let uptime = Int64((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000_000)
            var body: JSONObject = ["status": dbOK ? "ok" : "degraded", "version": .string(version), "uptimeSeconds": .int(uptime),
                                             "database": dbOK ? "ok" : "error"]
            // pgcore (issue 12): PostgreSQL unreachable — answered at once, with the reason.
            if !dbOK, let reason = domain.db.unavailableReason {
                body["database"] = "unavailable"
                body["reason"] = .string(reason)
            }
            return .json(.object(body), status: dbOK ? 200 : 503)
        }
    }
}
