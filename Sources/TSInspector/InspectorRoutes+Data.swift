import TSDomain
import TSHTTP
import TSJSON
import TSRoutes
import TSTestMode

/// The data browser and request list of the inspector:
///
/// | route | what |
/// |---|---|
/// | `GET browse` | the kinds that can be browsed, and whether changes are allowed (`editable`) |
/// | `GET browse/:kind?after=&limit=&roomId=&…` | one page of rows, keyset-paged (`next`) |
/// | `GET requests-log?since=&limit=` | the last request/response pairs, newest first, secrets redacted (not in production) |
/// | `PATCH elements/:elementId` | edit an element through the API's service (`element:updated` is emitted) — test/demo mode |
/// | `DELETE rows/:kind/:key?roomId=` | delete one row — test/demo mode |
/// | `POST reset` | what `POST /api/test/reset` does — test/demo mode |
/// | `POST fixtures` | what `POST /api/test/fixtures` does — test/demo mode |
/// | `POST sockets/:socketId/disconnect` | a server disconnect of the socket's connection (Socket.IO DISCONNECT: no reconnect) — test/demo mode |
/// | `GET export` | the whole dataset as a fixture document (`touchsync export`) — test/demo mode |
///
/// The changing routes are registered only in test or demo mode, and they require the header
/// `X-Inspector-Action: 1`: a page on another origin cannot send it without a CORS preflight,
/// which the server never grants, so a web page cannot drive them from a developer's browser; and
/// a request whose `Origin` is another site is refused outright (`CrossSiteCheck`).
extension InspectorRoutes {
    static let actionHeader = InspectorOperations.actionHeader

    func registerData(into router: inout RouterBuilder) {
        let routes = self
        func get(_ path: String, _ answer: @escaping @Sendable (HTTPRequest) async throws -> JSONValue) {
            router.get("/inspector/api/" + path, Authenticator.open { request in
                try await routes.guarded(request) { .json(try await answer(request), headers: Self.apiHeaders) }
            })
        }
        get("browse") { _ in
            .object(["editable": .bool(routes.editable), "maxPageSize": .int(Int64(routes.data.maxPageSize)),
                     "kinds": .array(InspectorData.kinds.map { k in
                         .object(["name": .string(k.name), "title": .string(k.title), "key": .optional(k.key),
                                  "filters": .array(k.filters.map { .string($0.0) })])
                     })])
        }
        get("browse/:kind") { request in
            try await routes.data.page(request.parameters["kind"] ?? "", query: request.queryItems)
        }
        if let log = requestLog {
            get("requests-log") { request in
                // At most the list's capacity (inspector.requestLogCapacity) entries exist: a larger limit is cut to it.
                let limit = min(log.capacity, try Self.intParameter(request, "limit", default: 100, range: 1...Self.maxQueryLimit))
                var since: Int64 = 0
                if let raw = request.queryItems["since"], !raw.isEmpty {
                    guard let v = Int64(raw), v >= 0 else { throw DomainError.validation(field: "since", message: "must be an integer >= 0") }
                    since = v
                }
                return .object([
                    "capacity": .int(Int64(log.capacity)), "maxBodyBytes": .int(Int64(log.maxBodyBytes)), "lastSequence": .int(log.lastSequence),
                    "requests": .array(log.entries(since: since, limit: limit).map(InspectorRequestLog.json)),
                ])
            }
        }
        guard editable else { return }

        func action(_ method: HTTPMethod, _ path: String, _ answer: @escaping @Sendable (HTTPRequest) async throws -> JSONValue) {
            router.add(method, "/inspector/api/" + path, Authenticator.open { request in
                try await routes.guarded(request) {
                    if let origin = request.header("Origin"), !CrossSiteCheck.isSameSiteOrLocal(origin: origin, host: request.header("Host")) {
                        throw DomainError.forbidden("the inspector refuses changes from another site (Origin \(origin))")
                    }
                    guard request.header(Self.actionHeader) == "1" else {
                        throw DomainError.forbidden("inspector changes need the header \(Self.actionHeader): 1 (sent by the inspector page)")
                    }
                    return .json(try await answer(request), headers: Self.apiHeaders)
                }
            })
        }
        action(.PATCH, "elements/:elementId") { request in
            guard let body = try request.jsonBody().objectValue else { throw DomainError.validation(field: "body", message: "must be a JSON object") }
            return try await routes.data.editElement(id: request.parameters["elementId"] ?? "", input: body)
        }
        action(.DELETE, "rows/:kind/:key") { request in
            try await routes.data.delete(kindName: request.parameters["kind"] ?? "", key: request.parameters["key"] ?? "",
                                         roomId: request.queryItems["roomId"])
        }
        action(.POST, "reset") { _ in
            let sockets = routes.hub.connectedSockets.count
            routes.hub.disconnectAll(reason: "test reset")
            let tables = try await DatabaseReset.run(routes.domain.db)
            routes.eventLog.clear()
            return .object(["tables": .array(tables.map { .string($0) }), "disconnectedSockets": .int(Int64(sockets)),
                            "lastEventSequence": .int(routes.eventLog.lastSequence)])
        }
        action(.POST, "fixtures") { request in
            let r = try await routes.fixtures.load(try request.jsonBody())
            return .object([
                "users": .object(r.users), "rooms": .object(r.rooms), "elements": .object(r.elements), "messages": .object(r.messages),
                "posts": .object(r.posts), "counts": .object(r.counts), "lastEventSequence": .int(routes.eventLog.lastSequence),
            ])
        }
        action(.POST, "sockets/:socketId/disconnect") { request in
            let id = request.parameters["socketId"] ?? ""
            guard let socket = routes.hub.socket(id: id), let session = routes.hub.engine.session(id: socket.engineSessionID) else {
                throw DomainError.notFound("Socket \(id)")
            }
            routes.hub.kick(session)
            return .object(["socketId": .string(id), "sid": .string(session.id)])
        }
        get("export") { _ in
            guard routes.editable else { throw DomainError.forbidden("export needs test or demo mode") }
            return try await DatasetExporter.export(routes.domain.db)
        }
    }
}
