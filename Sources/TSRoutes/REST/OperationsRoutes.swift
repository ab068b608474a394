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
            return .json(.object(["status": dbOK ? "ok" : "degraded", "version": .string(version), "uptimeSeconds": .int(uptime),
                                  "database": dbOK ? "ok" : "error"]), status: dbOK ? 200 : 503)
        }
    }
}
