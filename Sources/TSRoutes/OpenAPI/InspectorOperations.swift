import TSContract
import TSHTTP
import TSJSON

/// The inspector's routes in the OpenAPI document (appended to `OpenAPICatalog.operations`), so
/// the route-table drift check covers them. Registered unless the inspector is off; the routes
/// themselves are TSInspector's (`InspectorRoutes`); the pipeline validates their requests against these.
public enum InspectorOperations {
    typealias S = OpenAPISchema

    /// Most rooms / sockets one answer lists (the rest are counted in `total`).
    public static let maxRooms = 1000
    public static let maxSockets = 1000
    /// Members listed per room (all are counted in `memberCount`).
    public static let maxMembersPerRoom = 50
    /// Most events one `events` answer returns.
    public static let maxEvents = 1000
    /// The largest `limit` the data browser and request list accept (the schema's maximum); each
    /// cuts it to its own setting (`inspector.maxPageSize`, `inspector.requestLogCapacity`).
    public static let maxQueryLimit = 1_000_000

    static let tag = "Inspector"
    static let accessNote = "Not part of the app's API: the live inspector's data (docs in README, \"Live inspector\"). "
        + "Off with serve --no-inspector (404). When inspector.adminToken is set (required with TOUCHSYNC_ENV=production) "
        + "send Authorization: Bearer <adminToken>; without it only requests from this machine (loopback TCP peer, not forwarded "
        + "for another client) addressed to localhost or an IP address are answered."
    static let refused = [
        OpenAPIOperation.Body(401, "inspector.adminToken is set and the request does not carry it", schema: S.string, contentType: "text/plain; charset=utf-8"),
        OpenAPIOperation.Body(403, "No admin token configured, and the request is not from this machine or its Host is neither localhost "
                              + "nor an IP address (DNS-rebinding protection); the message names inspector.adminToken", schema: S.ref("Error")),
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
    ] + dataOperations

    static let overviewSchema = S.object([
        ("version", S.string), ("now", S.integer), ("startedAt", S.integer), ("uptimeSeconds", S.integer), ("demo", S.boolean),
        ("tokenRequired", S.boolean), ("editable", S.boolean), ("requestLog", S.boolean),
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

// The data browser and request list (InspectorRoutes+Data.swift).
extension InspectorOperations {
    /// The header an inspector change must carry (`1`): a cross-site form cannot set it.
    public static let actionHeader = "X-Inspector-Action"
    static let actionNote = accessNote + " Registered only in test or demo mode; needs the header X-Inspector-Action: 1."

    static func action(_ method: HTTPMethod, _ path: String, _ summary: String, _ schema: JSONValue, request: JSONValue? = nil,
                       parameters: [OpenAPIOperation.Parameter] = [], errors: [Int]) -> OpenAPIOperation {
        OpenAPIOperation(method, "/inspector/api/" + path, tag: tag, summary: summary, description: actionNote, security: .none,
                         envelope: .standard, request: request, responses: [OpenAPIOperation.Body(200, summary, schema: schema)] + refused,
                         parameters: parameters + [OpenAPIOperation.Parameter(header: actionHeader, "Must be 1.", schema: S.constant("1"))],
                         errors: errors)
    }

    static let rowSchema = S.object([], open: true)
    static let dataOperations: [OpenAPIOperation] = [
        api("browse", "The kinds of rows the data browser shows, and whether it may change them", S.object([
            ("editable", S.boolean), ("maxPageSize", S.integer),
            ("kinds", S.array(S.object([("name", S.string), ("title", S.string), ("key", nullableString), ("filters", S.array(S.string))]))),
        ])),
        OpenAPIOperation(.GET, "/inspector/api/browse/:kind", tag: tag,
                         summary: "One page of rows of a kind (keyset paging: pass `next` as `after`)", description: accessNote,
                         security: .none, envelope: .standard,
                         responses: [OpenAPIOperation.Body(200, "A page", schema: S.object([
                             ("kind", S.string), ("rows", S.array(rowSchema)), ("next", nullableString), ("total", S.integer),
                             ("limit", S.integer), ("key", nullableString),
                         ]))] + refused,
                         parameters: [
                             OpenAPIOperation.Parameter(query: "after", "The `next` of the previous page.", schema: S.string),
                             OpenAPIOperation.Parameter(query: "limit", "Rows at most (default 50; larger values are cut to inspector.maxPageSize).",
                                                        schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(maxQueryLimit))]),
                             OpenAPIOperation.Parameter(query: "roomId", "members, elements, messages, room notifications: of this room.", schema: S.string),
                             OpenAPIOperation.Parameter(query: "userId", "devices, notifications: of this user.", schema: S.string),
                             OpenAPIOperation.Parameter(query: "elementId", "reactions: on this element.", schema: S.string),
                         ], errors: [400, 404]),
        api("requests-log", "The last HTTP request/response pairs with bodies, newest first (Authorization, passwords and tokens redacted; not in production)",
            S.object([("capacity", S.integer), ("maxBodyBytes", S.integer), ("lastSequence", S.integer), ("requests", S.array(rowSchema))]),
            parameters: [OpenAPIOperation.Parameter(query: "since", "Only entries with seq > since.", schema: ["type": "integer", "minimum": 0, "maximum": .int(Int64.max)]),
                         OpenAPIOperation.Parameter(query: "limit", "At most this many (default 100; larger values are cut to inspector.requestLogCapacity).",
                                                    schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(maxQueryLimit))])]),
        action(.PATCH, "elements/:elementId", "Edit an element as the API would (element:updated is emitted)", S.ref("Element"),
               request: S.object([], open: true), errors: [400, 403, 404, 409]),
        action(.DELETE, "rows/:kind/:key", "Delete one row (elements and reactions through the API's services, with their events)",
               S.object([("kind", S.string), ("deleted", S.string)]),
               parameters: [OpenAPIOperation.Parameter(query: "roomId", "For members: the room.", schema: S.string)], errors: [400, 403, 404]),
        action(.POST, "reset", "Empty all data and disconnect every socket (as POST /api/test/reset)", S.object([
            ("tables", S.array(S.string)), ("disconnectedSockets", S.integer), ("lastEventSequence", S.integer),
        ]), errors: [403]),
        action(.POST, "fixtures", "Load a fixture document (as POST /api/test/fixtures)", S.ref("FixtureResult"),
               request: S.ref("FixtureDocument"), errors: [400, 403, 409, 415]),
        action(.POST, "sockets/:socketId/disconnect", "Disconnect a socket as the server would (Socket.IO DISCONNECT: the client does not reconnect)",
               S.object([("socketId", S.string), ("sid", S.describe(S.string, "Its Engine.IO session, closed with it."))]), errors: [403, 404]),
        OpenAPIOperation(.GET, "/inspector/api/export", tag: tag, summary: "The whole dataset as a fixture document (touchsync export)",
                         description: accessNote + " Registered only in test or demo mode.", security: .none, envelope: .standard,
                         responses: [OpenAPIOperation.Body(200, "The document", schema: S.ref("FixtureDocument"))] + refused),
    ]
}
