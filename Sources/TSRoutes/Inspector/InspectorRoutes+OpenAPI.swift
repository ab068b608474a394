import TSHTTP
import TSJSON

/// The inspector's routes in the OpenAPI document (appended to `OpenAPICatalog.operations`), so
/// the route-table drift check covers them. Registered unless the inspector is off.
extension InspectorRoutes {
    typealias S = OpenAPISchema

    static let tag = "Inspector"
    static let accessNote = "Not part of the app's API: the live inspector's data (docs in README, \"Live inspector\"). "
        + "Off with serve --no-inspector (404). When inspector.adminToken is set (required with TOUCHSYNC_ENV=production) "
        + "send Authorization: Bearer <adminToken>; without it only requests to localhost or an IP address are answered."
    static let refused = [
        OpenAPIOperation.Body(401, "inspector.adminToken is set and the request does not carry it", schema: S.string, contentType: "text/plain; charset=utf-8"),
        OpenAPIOperation.Body(403, "No admin token configured and the Host is neither localhost nor an IP address (DNS-rebinding protection)",
                              schema: S.string, contentType: "text/plain; charset=utf-8"),
    ]

    static func api(_ name: String, _ summary: String, _ schema: JSONValue, parameters: [OpenAPIOperation.Parameter] = []) -> OpenAPIOperation {
        OpenAPIOperation(.GET, "/inspector/api/" + name, tag: tag, summary: summary, description: accessNote, security: .none, envelope: .standard,
                         responses: [OpenAPIOperation.Body(200, summary, schema: schema)] + refused, parameters: parameters,
                         errors: parameters.isEmpty ? [] : [400])
    }

    static let nullableString = S.nullable(S.string)

    public static let openAPIOperations: [OpenAPIOperation] = [
        OpenAPIOperation(.GET, "/inspector", tag: tag, summary: "The live inspector: one static HTML page with plain JavaScript",
                         description: accessNote + " The page also accepts ?token=<adminToken>.", security: .none, envelope: .none,
                         responses: [OpenAPIOperation.Body(200, "The page", schema: S.string, contentType: "text/html; charset=utf-8")] + refused,
                         parameters: [OpenAPIOperation.Parameter(query: "token", "The admin token (only when inspector.adminToken is set).", schema: S.string)]),
        api("overview", "Version, uptime, socket and event counters", overviewSchema),
        api("sockets", "Connected Socket.IO sockets, oldest first", socketsSchema),
        api("rooms", "Rooms with members, element counts and sockets (rooms with sockets first, then by last activity)", roomsSchema,
            parameters: [roomsLimit]),
        api("events", "Emitted realtime events: the newest (no since) or those after since, oldest first", S.ref("RealtimeEventPage"),
            parameters: eventParameters),
        api("requests", "HTTP requests and latency per second (the inspector's own requests left out)", requestsSchema, parameters: [secondsParameter]),
        api("demo", "In demo mode each demo user with a fresh token; otherwise an empty list", S.object([
            ("demo", S.boolean),
            ("users", S.array(S.object([("username", S.string), ("password", S.string), ("userId", S.string), ("token", S.string)]))),
        ])),
        api("snapshot", "Everything the page shows but the demo users, in one request (what the page polls each second)", S.object([
            ("overview", overviewSchema), ("sockets", socketsSchema), ("rooms", roomsSchema), ("requests", requestsSchema),
            ("events", S.ref("RealtimeEventPage")),
        ]), parameters: eventParameters + [secondsParameter]),
    ]

    static let overviewSchema = S.object([
        ("version", S.string), ("now", S.integer), ("startedAt", S.integer), ("uptimeSeconds", S.integer), ("demo", S.boolean),
        ("tokenRequired", S.boolean),
        ("sockets", S.object([("total", S.integer), ("websocket", S.integer), ("polling", S.integer)])),
        ("realtime", S.object([("hubRooms", S.integer), ("eventsEmitted", S.integer), ("eventsDropped", S.integer),
                               ("slowConsumersDisconnected", S.integer)])),
        ("events", S.object([("lastSequence", S.integer), ("capacity", S.integer)])),
    ])

    static let socketsSchema = S.object([
        ("total", S.integer),
        ("sockets", S.array(S.object([
            ("id", S.string), ("engineSessionId", S.string), ("namespace", S.string), ("userId", nullableString), ("username", nullableString),
            ("transport", S.enumeration(["polling", "websocket"])), ("roomIds", S.array(S.string)),
            ("channels", S.describe(S.array(S.string), "Every hub room the socket is in but its own (room:<id>, user:<id>).")),
            ("remoteAddress", nullableString), ("connectedAt", S.describe(S.integer, "Unix seconds.")), ("connectedAtISO", S.dateTime),
        ]), maxItems: maxSockets)),
    ])

    static let roomsSchema = S.object([
        ("total", S.integer),
        ("rooms", S.array(S.object([
            ("id", S.string), ("name", S.string), ("elementCount", S.integer), ("memberCount", S.integer),
            ("sockets", S.describe(S.integer, "Sockets that joined the room.")), ("isActive", S.boolean),
            ("lastActivityAt", S.integer), ("lastActivityAtISO", S.dateTime),
            ("members", S.array(S.object([("id", S.string), ("username", S.string), ("online", S.boolean), ("inRoom", S.boolean)]),
                                maxItems: maxMembersPerRoom)),
        ]), maxItems: maxRooms)),
    ])
    static let roomsLimit = OpenAPIOperation.Parameter(query: "limit", "Rooms at most (1-1000, default 100).",
                                                       schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(maxRooms))])

    static let eventParameters = [
        OpenAPIOperation.Parameter(query: "since", "Only events with seq > since; without it, the newest `limit`.",
                                   schema: ["type": "integer", "minimum": 0, "maximum": .int(Int64.max)]),
        OpenAPIOperation.Parameter(query: "limit", "At most this many (1-1000, default 200).",
                                   schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(maxEvents))]),
        OpenAPIOperation.Parameter(query: "event", "Only this event name.", schema: S.string),
        OpenAPIOperation.Parameter(query: "roomId", "Only events addressed to, or about, this room.", schema: S.string),
    ]

    static let requestsSchema = S.object([
        ("excludedPrefix", S.string),
        ("seconds", S.array(S.object([
            ("t", S.describe(S.integer, "Unix second.")), ("requests", S.integer), ("clientErrors", S.integer), ("serverErrors", S.integer),
            ("avgLatencyMs", S.number), ("maxLatencyMs", S.number),
        ]))),
    ])
    static let secondsParameter = OpenAPIOperation.Parameter(query: "seconds", "How many seconds back (1-600, default 300).",
                                                             schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(HTTPMetrics.recentCapacity))])
}
