import Dispatch
import Logging
import TSDomain
import TSHTTP
import TSJSON
import TSRealtime
import TSRoutes
import TSSocketIO

/// Test-target mode (`serve --test-mode`, docs/test-mode.md): routes that let an integration
/// test suite reset the server, load fixtures in one call and read what was broadcast.
/// Registered only when the mode is on (otherwise they are 404), and they need no token: this is
/// for local test targets, never a shared or production server (which refuses the mode).
public struct TestRoutes: Sendable {
    let domain: TouchSyncDomain
    /// Emits the events test mode logs; its server is the one resets and faults act on.
    let broadcaster: RealtimeBroadcaster
    var hub: SocketIOServer { broadcaster.hub }
    let eventLog: RealtimeEventLog
    let fixtures: FixtureLoader
    let logger: Logger
    /// Bytes a delayed or held session may queue (setting `realtime.faultMaxBufferedBytes`).
    let faultMaxBufferedBytes: Int
    /// The other test-mode nodes sharing the database, nil for a single node (docs/test-mode.md "Against a cluster").
    let cluster: (any TestModeCluster)?
    /// The domain's movable clock (`/api/test/clock`), nil when the domain runs on another clock.
    let clock: MovableWallClock?

    /// Most events one `GET /api/test/events` returns.
    public static let maxEventsPerPage = 10_000

    /// Events leave after the write's answer (docs/realtime.md "Order"): a fixtures load waits for
    /// `broadcaster` to emit them (`RealtimeBroadcaster.flush`) before it reads `lastEventSequence`.
    public init(domain: TouchSyncDomain, broadcaster: RealtimeBroadcaster, eventLog: RealtimeEventLog, logger: Logger,
                faultMaxBufferedBytes: Int = 1 << 20, cluster: (any TestModeCluster)? = nil) {
        self.cluster = cluster
        clock = domain.clock as? MovableWallClock
        self.domain = domain
        self.broadcaster = broadcaster
        self.eventLog = eventLog
        fixtures = FixtureLoader(domain: domain, hashes: PasswordHashCache())
        self.logger = logger
        self.faultMaxBufferedBytes = faultMaxBufferedBytes
    }

    /// This node's test-mode memory: what a reset clears here, and on the other nodes of a cluster.
    public var localNode: TestModeLocalNode { TestModeLocalNode(broadcaster: broadcaster, eventLog: eventLog, clock: clock) }

    public func register(into router: inout RouterBuilder) {
        let domain = self.domain
        let hub = self.hub
        let log = self.eventLog
        let fixtures = self.fixtures
        let logger = self.logger
        let broadcaster = self.broadcaster
        let node = self.localNode
        let cluster = self.cluster

        // Disconnect every socket, empty every data table in one transaction, forget the events;
        // in a cluster, every other test-mode node drops its sockets and events too.
        router.post("/api/test/reset", Authenticator.open { _ in
            let started = DispatchTime.now().uptimeNanoseconds
            let sockets = hub.connectedSockets.count
            hub.disconnectAll(reason: "test reset")
            let tables = try await DatabaseReset.run(domain.db)
            if let clock = domain.clock as? MovableWallClock, clock.offsetMicroseconds != 0 {
                clock.reset()  // a reset puts time back too
                _ = await cluster?.moveClock(offsetMicroseconds: 0)
            }
            await node.clearEvents()  // events of earlier writes still on their way are not logged after the reset
            domain.writeLimits.setActive(false)  // a test that turned the limits on does not leave them on for the next
            let nodes = try await Self.synchronize(cluster, .reset, node: node, logger: logger)
            let ms = (Double(DispatchTime.now().uptimeNanoseconds - started) / 1e3).rounded() / 1e3
            logger.info("test reset: \(tables.count) tables emptied, \(sockets) sockets disconnected in \(ms) ms on \(nodes) node(s)")
            return Reply.data(.object([
                "tables": .array(tables.map { .string($0) }), "disconnectedSockets": .int(Int64(sockets)),
                "durationMs": .double(ms), "lastEventSequence": .int(log.lastSequence), "nodes": .int(Int64(nodes)),
            ]))
        })

        router.post("/api/test/fixtures", Authenticator.open { request in
            let r = try await fixtures.load(try request.jsonBody())
            await broadcaster.flush()  // the fixtures' events are logged before `lastEventSequence`
            _ = try await Self.synchronize(cluster, .flush, node: node, logger: logger)  // … on every node
            return Reply.data(.object([
                "users": .object(r.users), "rooms": .object(r.rooms), "elements": .object(r.elements), "messages": .object(r.messages),
                "posts": .object(r.posts), "counts": .object(r.counts), "lastEventSequence": .int(log.lastSequence),
            ]), status: 201)
        })

        router.get("/api/test/events", Authenticator.open { request in
            let q = request.queryItems
            var since: Int64 = 0
            if let raw = q["since"] {
                guard let v = Int64(raw), v >= 0 else { throw DomainError.validation(field: "since", message: "must be an integer >= 0") }
                since = v
            }
            var limit = 1000
            if let raw = q["limit"] {
                guard let v = Int(raw), (1...Self.maxEventsPerPage).contains(v) else {
                    throw DomainError.validation(field: "limit", message: "must be an integer from 1 to \(Self.maxEventsPerPage)")
                }
                limit = v
            }
            let page = try await Self.events(log, since: since, limit: limit, event: q["event"].flatMap { $0.isEmpty ? nil : $0 },
                                             roomId: q["roomId"].flatMap { $0.isEmpty ? nil : $0 }, wait: q["wait"], logger: logger)
            return Reply.data(.object([
                "events": .array(page.entries.map(\.json)), "lastSequence": .int(page.lastSequence), "missed": .int(page.missed),
                "capacity": .int(Int64(log.capacity)),
            ]))
        })

        registerFaults(into: &router)
        registerClock(into: &router)
        registerLimits(into: &router)
    }
}

extension TestRoutes {
    /// Applies `step` on the other test-mode nodes of the cluster and aligns every node's event
    /// log after one sequence number (so `lastEventSequence` is a valid `since` on any node);
    /// returns how many nodes took part, this one included. A node that is alive but did not
    /// confirm in time is a 504 naming it: its sockets or event log may be stale.
    static func synchronize(_ cluster: (any TestModeCluster)?, _ step: TestModeClusterStep, node: TestModeLocalNode,
                            logger: Logger) async throws -> Int {
        guard let cluster else { return 1 }
        let outcome = await cluster.synchronize(step, local: node)
        guard outcome.unanswered.isEmpty else {
            let names = outcome.unanswered.joined(separator: ", ")
            logger.error("test \(step.rawValue): applied here and on \(outcome.nodes - 1) other node(s), but \(names) did not confirm in time")
            throw APIError(status: 504, code: "CLUSTER_TIMEOUT",
                           message: "the \(step.rawValue) was applied on this node and \(outcome.nodes - 1) other node(s), but these live test-mode "
                               + "nodes did not confirm it in time: \(names); their sockets or event logs may be stale")
        }
        return outcome.nodes
    }
}
