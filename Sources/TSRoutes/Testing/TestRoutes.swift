import Dispatch
import Logging
import TSDomain
import TSHTTP
import TSJSON
import TSSocketIO

/// Test-target mode (`serve --test-mode`, docs/test-mode.md): routes that let an integration
/// test suite reset the server, load fixtures in one call and read what was broadcast.
/// Registered only when the mode is on (otherwise they are 404), and they need no token: this is
/// for local test targets, never a shared or production server (which refuses the mode).
public struct TestRoutes: Sendable {
    let domain: TouchSyncDomain
    let hub: SocketIOServer
    let eventLog: RealtimeEventLog
    let fixtures: FixtureLoader
    let logger: Logger
    /// Bytes a delayed or held session may queue (setting `realtime.faultMaxBufferedBytes`).
    let faultMaxBufferedBytes: Int
    /// Waits until the events queued so far have been emitted (`RealtimeBroadcaster.flush`).
    let flushEvents: @Sendable () async -> Void

    /// Most events one `GET /api/test/events` returns.
    public static let maxEventsPerPage = 10_000

    /// `flushEvents`: waits for the events queued so far to be emitted; events leave after the
    /// write's answer (docs/realtime.md "Order"), so `lastEventSequence` is read after it.
    public init(domain: TouchSyncDomain, hub: SocketIOServer, eventLog: RealtimeEventLog, logger: Logger,
                faultMaxBufferedBytes: Int = 1 << 20, flushEvents: @escaping @Sendable () async -> Void = {}) {
        self.flushEvents = flushEvents
        self.domain = domain
        self.hub = hub
        self.eventLog = eventLog
        fixtures = FixtureLoader(domain: domain, hashes: PasswordHashCache())
        self.logger = logger
        self.faultMaxBufferedBytes = faultMaxBufferedBytes
    }

    public func register(into router: inout RouterBuilder) {
        let domain = self.domain
        let hub = self.hub
        let log = self.eventLog
        let fixtures = self.fixtures
        let logger = self.logger
        let flush = self.flushEvents

        // Disconnect every socket, empty every data table in one transaction, forget the events.
        router.post("/api/test/reset", Authenticator.open { _ in
            let started = DispatchTime.now().uptimeNanoseconds
            let sockets = hub.connectedSockets.count
            hub.disconnectAll(reason: "test reset")
            let tables = try await DatabaseReset.run(domain.db)
            await flush()  // events of earlier writes still on their way are not logged after the reset
            log.clear()
            let ms = (Double(DispatchTime.now().uptimeNanoseconds - started) / 1e3).rounded() / 1e3
            logger.info("test reset: \(tables.count) tables emptied, \(sockets) sockets disconnected in \(ms) ms")
            return Reply.data(.object([
                "tables": .array(tables.map { .string($0) }), "disconnectedSockets": .int(Int64(sockets)),
                "durationMs": .double(ms), "lastEventSequence": .int(log.lastSequence),
            ]))
        })

        router.post("/api/test/fixtures", Authenticator.open { request in
            let r = try await fixtures.load(try request.jsonBody())
            await flush()  // the fixtures' events are logged before `lastEventSequence`
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
    }
}
