import Dispatch
import TSDomain
import TSHTTP
import TSJSON

/// `GET /health` (docs/api.md, "Operations"); no auth. Anyone gets the status words; the reasons
/// (error text) and components' details (a backup's absolute paths) only a caller that may read
/// `/metrics` (`MetricsAccess`: this machine outside production, `metrics.allowFrom`, `metrics.token`).
public struct OperationsRoutes: Sendable {
    let domain: TouchSyncDomain
    let version: String
    let startedAt: UInt64
    /// redis hook: more parts of the node (e.g. "redis"), each a field of the answer; one that is
    /// not ok makes `status` "degraded" with `degradedReason`, and the answer stays 200 (the node
    /// still serves REST and its own sockets).
    let components: [HealthComponent]
    /// Whether a request may see reasons and details.
    let detailAccess: MetricsAccess

    public init(domain: TouchSyncDomain, version: String, components: [HealthComponent] = [], detailAccess: MetricsAccess = MetricsAccess()) {
        self.components = components
        self.detailAccess = detailAccess
        self.domain = domain
        self.version = version
        startedAt = DispatchTime.now().uptimeNanoseconds
    }

    public func register(into router: inout RouterBuilder) {
        let domain = self.domain
        let version = self.version
        let startedAt = self.startedAt
        let components = self.components
        let detailAccess = self.detailAccess
        // The answer of nearly every probe, written as bytes: the same members, in the same order,
        // as the tree below gives when nothing is degraded.
        let uptime: @Sendable () -> Int64 = { Int64((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000_000) }
        let okAnswer: @Sendable () -> HTTPResponse = {
            var w = JSONBytesWriter(capacity: 96 + version.utf8.count)
            w.objectValue {
                $0.string("status", "ok")
                $0.string("version", version)
                $0.int("uptimeSeconds", uptime())
                $0.string("database", "ok")
            }
            return .bytes(w.bytes, contentType: "application/json; charset=utf-8")
        }
        // Answered on the loop without a task while the database's health is known (a ping within
        // the last second, Database.knownHealth) and no component can degrade the node.
        let immediate: HTTPImmediateHandler = { _ in
            guard components.isEmpty, let known = domain.db.knownHealth(), known != .failed else { return nil }
            return okAnswer()
        }
        router.get("/health", immediate: immediate) { request in
            // Never queues behind busy readers: a busy pool is a working database (Database.health).
            let known = domain.db.knownHealth()
            let dbOK = known != nil ? known != .failed : await domain.db.ping()
            if dbOK && components.isEmpty { return okAnswer() }
            let details = detailAccess.check(request) == .allowed
            var body: JSONObject = ["status": dbOK ? "ok" : "degraded", "version": .string(version), "uptimeSeconds": .int(uptime()),
                                    "database": dbOK ? "ok" : "error"]
            var reasons: [String] = []
            // PostgreSQL unreachable — answered at once, with the reason.
            if !dbOK, let reason = domain.db.unavailableReason {
                body["database"] = "unavailable"
                if details { body["reason"] = .string(reason) }
                reasons.append("database: \(reason)")
            }
            var degraded = !reasons.isEmpty
            for c in components {  // redis hook
                let state = c.check()
                body[c.name] = details ? (c.detail?() ?? .string(state.status)) : .string(state.status)
                if let reason = state.degradedReason { reasons.append("\(c.name): \(reason)"); degraded = true }
            }
            if degraded {
                body["status"] = "degraded"
                body["degradedReason"] = details ? .string(reasons.joined(separator: "; "))
                    : .string("details for this machine or a metrics.allowFrom / metrics.token caller only")
            }
            return .json(.object(body), status: dbOK ? 200 : 503)
        }
    }
}

/// A part of the node `/health` reports on (redis hook): its status word and, when it degrades
/// the node, why. `detail`, when given, is what `/health` shows under `name` instead of the word
/// (scheduled backups show their last outcome).
public struct HealthComponent: Sendable {
    public let name: String
    public let check: @Sendable () -> (status: String, degradedReason: String?)
    public let detail: (@Sendable () -> JSONValue)?

    public init(name: String, check: @escaping @Sendable () -> (status: String, degradedReason: String?),
                detail: (@Sendable () -> JSONValue)? = nil) {
        self.name = name
        self.check = check
        self.detail = detail
    }
}
