import Logging
import Dispatch
import TSDomain
import TSHTTP
import TSJSON
import TSRealtime
import TSRoutes
import TSSocketIO
import TSStorage
import TSTestMode

/// The live inspector: `GET /inspector` serves one static HTML page with plain
/// JavaScript (`InspectorPage`), which polls small JSON endpoints under `/inspector/api/`:
///
/// | route | what |
/// |---|---|
/// | `overview` | version, uptime, socket and event counters, whether demo mode is on |
/// | `sockets` | connected Socket.IO sockets: id, user, transport, TouchSync rooms, connected since |
/// | `rooms` | rooms (the ones with sockets first, then by last activity): members, element count, sockets |
/// | `events?since=&limit=&event=&roomId=` | the emitted realtime events (`RealtimeEventLog`) with payloads |
/// | `requests?seconds=` | requests and latency per second over the last minutes (`HTTPMetrics.recent`) |
/// | `demo` | in demo mode, each demo user with a fresh token; otherwise an empty list |
/// | `snapshot?since=&event=&roomId=&seconds=` | all but `demo` in one answer: what the page polls each second |
///
/// Access is decided by `InspectorAccess`. No route here ever returns a user's token except
/// the demo users' in demo mode.
public struct InspectorRoutes: Sendable {
    /// A demo user whose token the inspector may show (demo mode only).
    public struct DemoUser: Sendable {
        public let username: String
        public let password: String
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    let domain: TouchSyncDomain
    let hub: SocketIOServer
    let eventLog: RealtimeEventLog
    let httpMetrics: HTTPMetrics
    let access: InspectorAccess
    let demoUsers: [DemoUser]
    let version: String
    let startedAtSeconds: Int64
    /// Test or demo mode: the data browser may edit an element, delete rows, reset and load fixtures.
    let editable: Bool
    /// The request list (nil in production or when `inspector.requestLogCapacity` is 0).
    let requestLog: InspectorRequestLog?
    let data: InspectorData
    let fixtures: FixtureLoader

    public static let maxRooms = InspectorOperations.maxRooms
    public static let maxSockets = InspectorOperations.maxSockets
    public static let maxMembersPerRoom = InspectorOperations.maxMembersPerRoom
    public static let maxEvents = InspectorOperations.maxEvents

    /// `demoUsers`: empty unless the server runs in demo mode.
    public init(domain: TouchSyncDomain, hub: SocketIOServer, eventLog: RealtimeEventLog, httpMetrics: HTTPMetrics,
                access: InspectorAccess, demoUsers: [DemoUser], version: String, editable: Bool = false,
                requestLog: InspectorRequestLog? = nil, maxPageSize: Int = 200) {
        self.domain = domain
        self.editable = editable
        self.requestLog = requestLog
        data = InspectorData(domain: domain, maxPageSize: maxPageSize)
        fixtures = FixtureLoader(domain: domain, hashes: PasswordHashCache())
        self.hub = hub
        self.eventLog = eventLog
        self.httpMetrics = httpMetrics
        self.access = access
        self.demoUsers = demoUsers
        self.version = version
        startedAtSeconds = domain.clock.nowSeconds()
    }

    public func register(into router: inout RouterBuilder) {
        let routes = self
        let page: HTTPHandler = { request in
            await routes.guarded(request, allowQueryToken: true) {
                HTTPResponse.bytes(InspectorPage.bytes, contentType: "text/html; charset=utf-8", headers: InspectorPage.headers)
            }
        }
        router.get("/inspector", page)
        let api: [(String, @Sendable (HTTPRequest) async throws -> JSONValue)] = [
            ("overview", { _ in routes.overview() }),
            ("sockets", { _ in try await routes.sockets() }),
            ("rooms", { r in try await routes.rooms(limit: try Self.intParameter(r, "limit", default: 100, range: 1...Self.maxRooms)) }),
            ("events", { r in try routes.events(r) }),
            ("requests", { r in routes.requests(seconds: try Self.intParameter(r, "seconds", default: 300, range: 1...HTTPMetrics.recentCapacity)) }),
            ("demo", { _ in await routes.demo() }),
            ("snapshot", { r in try await routes.snapshot(r) }),
        ]
        for (name, answer) in api {
            // Authenticator.open renders a DomainError (a bad query parameter) as a 400 error envelope.
            router.get("/inspector/api/" + name, Authenticator.open { request in
                var response = try await routes.guarded(request) { .json(try await answer(request), headers: Self.apiHeaders) }
                // The page polls once a second: keep those lines out of the info access log.
                if name == "snapshot" && response.status == 200 { response.accessLogLevel = .debug }
                return response
            })
        }
        registerData(into: &router)
    }

    static let apiHeaders: HTTPHeaders = ["Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"]

    /// Runs `body` when `access` allows the request; otherwise 401 (plain text) or 403 (the JSON error envelope) with the reason.
    func guarded(_ request: HTTPRequest, allowQueryToken: Bool = false, _ body: () async throws -> HTTPResponse) async rethrows -> HTTPResponse {
        switch access.check(request, allowQueryToken: allowQueryToken) {
        case .allowed:
            return try await body()
        case .unauthorized:
            var h = Self.apiHeaders
            h.add("WWW-Authenticate", "Bearer realm=\"touchsync-inspector\"")
            return .text("The inspector needs the admin token (inspector.adminToken): send Authorization: Bearer <token>, or open /inspector?token=<token>.\n",
                         status: 401, headers: h)
        case .notLocal(let decision):
            return .json(Envelope.standard.errorBody(code: "FORBIDDEN", message: InspectorAccess.notLocalMessage(decision)),
                         status: 403, headers: Self.apiHeaders)
        case .foreignHost(let host):
            let message = "The inspector without inspector.adminToken answers only requests addressed to localhost or an IP address "
                + "(Host \(host) refused, DNS-rebinding protection). Use http://127.0.0.1:<port>/inspector or set inspector.adminToken "
                + "(environment TOUCHSYNC_INSPECTOR_ADMIN_TOKEN)."
            return .json(Envelope.standard.errorBody(code: "FORBIDDEN", message: message), status: 403, headers: Self.apiHeaders)
        }
    }

    static let maxQueryLimit = InspectorOperations.maxQueryLimit

    static func intParameter(_ request: HTTPRequest, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = request.queryItems[name], !raw.isEmpty else { return value }
        guard let v = Int(raw), range.contains(v) else {
            throw DomainError.validation(field: name, message: "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    // MARK: - Answers

    func overview() -> JSONValue {
        let s = hub.stats
        let now = domain.clock.nowSeconds()
        return .object([
            "version": .string(version), "now": .int(now), "startedAt": .int(startedAtSeconds), "uptimeSeconds": .int(now - startedAtSeconds),
            "demo": .bool(!demoUsers.isEmpty), "tokenRequired": .bool(access.tokenRequired), "editable": .bool(editable),
            "requestLog": .bool(requestLog != nil),
            "sockets": ["total": .int(Int64(s.sockets)), "websocket": .int(Int64(s.websocketSockets)), "polling": .int(Int64(s.pollingSockets))],
            "realtime": ["hubRooms": .int(Int64(s.rooms)), "eventsEmitted": .int(Int64(s.eventsEmitted)), "eventsDropped": .int(Int64(s.eventsDropped)),
                         "slowConsumersDisconnected": .int(Int64(s.slowConsumersDisconnected))],
            "events": ["lastSequence": .int(eventLog.lastSequence), "capacity": .int(Int64(eventLog.capacity))],
        ])
    }

    func sockets() async throws -> JSONValue {
        let all = hub.connectedSockets.sorted { ($0.connectedAt, $0.id) < ($1.connectedAt, $1.id) }
        let shown = all.prefix(Self.maxSockets)
        let names = try await usernames(Set(shown.compactMap(\.userID)))
        return .object([
            "total": .int(Int64(all.count)),
            "sockets": .array(shown.map { socket in
                let channels = socket.rooms.subtracting([socket.id]).sorted()
                let roomIds = channels.filter { $0.hasPrefix("room:") }.map { String($0.dropFirst(5)) }
                return .object([
                    "id": .string(socket.id), "engineSessionId": .string(socket.engineSessionID), "namespace": .string(socket.namespace),
                    "userId": .optional(socket.userID), "username": .optional(socket.userID.flatMap { names[$0] }),
                    "transport": .string(socket.transport.rawValue), "roomIds": .array(roomIds.map { .string($0) }),
                    "channels": .array(channels.map { .string($0) }), "remoteAddress": .optional(socket.handshake.remoteAddress),
                    "connectedAt": .int(socket.connectedAt), "connectedAtISO": .string(Timestamp.iso8601(socket.connectedAt)),
                ])
            }),
        ])
    }

    /// Rooms with sockets in them first, then the most recently active, at most `limit`.
    func rooms(limit: Int) async throws -> JSONValue {
        let connected = hub.connectedSockets
        var socketsPerRoom: [String: Int] = [:]
        var usersInRoom: [String: Set<String>] = [:]
        var onlineUsers = Set<String>()
        for socket in connected {
            if let u = socket.userID { onlineUsers.insert(u) }
            for channel in socket.rooms where channel.hasPrefix("room:") {
                let id = String(channel.dropFirst(5))
                socketsPerRoom[id, default: 0] += 1
                if let u = socket.userID { usersInRoom[id, default: []].insert(u) }
            }
        }
        struct RoomRow { let id: String; let name: String; let elementCount: Int64; let lastActivityAt: Int64; let isActive: Bool }
        let columns = "SELECT id, name, element_count, last_activity_at, is_active FROM rooms"
        let room: @Sendable (Row) -> RoomRow = { r in
            RoomRow(id: r.string(0), name: r.string(1), elementCount: r.int(2), lastActivityAt: r.int(3), isActive: r.bool(4))
        }
        // Immutable copies for the reader thread.
        let (socketsPerRoomNow, usersInRoomNow, onlineUsersNow) = (socketsPerRoom, usersInRoom, onlineUsers)
        return try await domain.db.read { c in
            let total = try c.scalarInt("SELECT COUNT(*) FROM rooms") ?? 0
            let live = Array(socketsPerRoomNow.keys.sorted().prefix(limit))
            var rows: [RoomRow] = live.isEmpty ? [] : try c.rows("\(columns) WHERE id IN (\(Self.placeholders(live.count)))", live.map { .text($0) }, room)
            rows.sort { ($0.lastActivityAt, $0.id) > ($1.lastActivityAt, $1.id) }
            let seen = Set(rows.map(\.id))
            if rows.count < limit {
                for r in try c.rows("\(columns) ORDER BY last_activity_at DESC, id DESC LIMIT ?", [.int(Int64(limit))], room)
                where rows.count < limit && !seen.contains(r.id) {
                    rows.append(r)
                }
            }
            var members: [String: [(id: String, username: String)]] = [:]
            var memberCount: [String: Int] = [:]
            if !rows.isEmpty {
                let ids = rows.map { SQLValue.text($0.id) }
                for (roomId, userId, username) in try c.rows("""
                    SELECT m.room_id, u.id, u.username FROM room_members m JOIN users u ON u.id = m.user_id
                    WHERE m.room_id IN (\(Self.placeholders(ids.count))) ORDER BY m.room_id, m.joined_at, u.username
                    """, ids, { ($0.string(0), $0.string(1), $0.string(2)) }) {
                    memberCount[roomId, default: 0] += 1
                    if members[roomId, default: []].count < Self.maxMembersPerRoom { members[roomId, default: []].append((userId, username)) }
                }
            }
            return .object([
                "total": .int(total),
                "rooms": .array(rows.map { r in
                    .object([
                        "id": .string(r.id), "name": .string(r.name), "elementCount": .int(r.elementCount),
                        "memberCount": .int(Int64(memberCount[r.id] ?? 0)), "sockets": .int(Int64(socketsPerRoomNow[r.id] ?? 0)),
                        "isActive": .bool(r.isActive), "lastActivityAt": .int(r.lastActivityAt),
                        "lastActivityAtISO": .string(Timestamp.iso8601(r.lastActivityAt)),
                        "members": .array((members[r.id] ?? []).map { m in
                            .object(["id": .string(m.id), "username": .string(m.username), "online": .bool(onlineUsersNow.contains(m.id)),
                                     "inRoom": .bool(usersInRoomNow[r.id]?.contains(m.id) == true)])
                        }),
                    ])
                }),
            ])
        }
    }

    /// Without `since`: the newest `limit` matching events; with it, the ones after it (oldest first).
    func events(_ request: HTTPRequest) throws -> JSONValue {
        let q = request.queryItems
        let limit = try Self.intParameter(request, "limit", default: 200, range: 1...Self.maxEvents)
        let event = q["event"].flatMap { $0.isEmpty ? nil : $0 }
        let roomId = q["roomId"].flatMap { $0.isEmpty ? nil : $0 }
        let page: RealtimeEventLog.Page
        if let raw = q["since"], !raw.isEmpty {
            guard let since = Int64(raw), since >= 0 else { throw DomainError.validation(field: "since", message: "must be an integer >= 0") }
            page = eventLog.events(since: since, limit: limit, event: event, roomId: roomId)
        } else {
            page = eventLog.latest(limit: limit, event: event, roomId: roomId)
        }
        return .object([
            "events": .array(page.entries.map(\.json)), "lastSequence": .int(page.lastSequence), "missed": .int(page.missed),
            "capacity": .int(Int64(eventLog.capacity)),
        ])
    }

    func requests(seconds: Int) -> JSONValue {
        .object([
            "excludedPrefix": .string(HTTPMetrics.recentExcludedPrefix),
            "seconds": .array(httpMetrics.recent(seconds: seconds).map { s in
                let avg = s.requests == 0 ? 0 : Double(s.latencySumNanoseconds) / Double(s.requests) / 1e6
                return .object([
                    "t": .int(s.second), "requests": .int(Int64(s.requests)), "clientErrors": .int(Int64(s.clientErrors)),
                    "serverErrors": .int(Int64(s.serverErrors)), "avgLatencyMs": .double((avg * 1000).rounded() / 1000),
                    "maxLatencyMs": .double((Double(s.latencyMaxNanoseconds) / 1e3).rounded() / 1000),
                ])
            }),
        ])
    }

    /// One poll of the page: overview, sockets, rooms, requests and the events (as `events`).
    func snapshot(_ request: HTTPRequest) async throws -> JSONValue {
        let sockets = try await sockets()
        let rooms = try await rooms(limit: 100)
        return .object([
            "overview": overview(), "sockets": sockets, "rooms": rooms,
            "requests": requests(seconds: try Self.intParameter(request, "seconds", default: 300, range: 1...HTTPMetrics.recentCapacity)),
            "events": try events(request),
        ])
    }

    /// Demo users and a fresh token each (demo mode only; never any other user's token).
    func demo() async -> JSONValue {
        var users: [JSONValue] = []
        for u in demoUsers {
            guard let id = try? await domain.auth.userId(forUsername: u.username) else { continue }
            users.append(.object(["username": .string(u.username), "password": .string(u.password), "userId": .string(id),
                                  "token": .string(await domain.auth.issueToken(userId: id))]))
        }
        return .object(["demo": .bool(!demoUsers.isEmpty), "users": .array(users)])
    }

    func usernames(_ ids: Set<String>) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        let list = Array(ids)
        return try await domain.db.read { c in
            var out: [String: String] = [:]
            for (id, name) in try c.rows("SELECT id, username FROM users WHERE id IN (\(Self.placeholders(list.count)))", list.map { .text($0) },
                                         { ($0.string(0), $0.string(1)) }) {
                out[id] = name
            }
            return out
        }
    }

    static func placeholders(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ", ") }
}
