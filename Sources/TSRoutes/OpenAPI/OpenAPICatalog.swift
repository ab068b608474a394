import TSContract
import TSHTTP
import TSJSON

/// Every route the server can register, documented (docs/api.md is generated from it). A route registered in
/// the router but missing here, or documented here but registered nowhere, fails
/// `OpenAPITests` — add the entry next to the route.
public enum OpenAPICatalog {
    /// Who may call the test routes (`TestModeAccess`), said once for each of them.
    static let testModeAccess = " Only this machine (loopback TCP peer, not forwarded by a proxy, Host localhost or an IP) unless "
        + "testModeToken is set; changes need the header X-TouchSync-Test (1, or the token when set), every request the token when set; "
        + "another site's Origin is refused (docs/test-mode.md)."
    typealias S = OpenAPISchema
    typealias Op = OpenAPIOperation
    typealias Body = OpenAPIOperation.Body
    typealias P = OpenAPIOperation.Parameter

    static func data(_ status: Int, _ description: String, _ schema: JSONValue) -> Body { Body(status, description, schema: S.dataEnvelope(schema)) }
    static func mobile(_ status: Int, _ description: String, _ schema: JSONValue) -> Body { Body(status, description, schema: S.mobileEnvelope(schema)) }

    static let socketHeader = P(header: "X-Socket-Id", "The caller's Socket.IO socket id: that socket does not get the room event this request causes.",
                                schema: ["type": "string", "maxLength": 64])
    static let limit50 = P(query: "limit", "Page size, 1-100 (default 50).", schema: ["type": "integer", "minimum": 1, "maximum": 100])
    static let before = P(query: "before", "Cursor: the id of the last item of the previous page (404 when it is not an item of this list).",
                          schema: S.string(max: 64))
    /// Query integers without a stated bound are bounded by what the server can represent.
    static let int64Max: JSONValue = .int(Int64.max)
    static let engineError = Body(400, "Engine.IO error (unknown transport or sid, bad handshake method, bad request)", schema: S.ref("EngineIOError"))
    static let engineQuery = [P(query: "EIO", "Engine.IO protocol version: 4 (anything else, or none, is 400 with Engine.IO error code 5).",
                                schema: S.string, required: true),
                              P(query: "transport", "polling or websocket (anything else, or none, is 400 with Engine.IO error code 0).",
                                schema: S.enumeration(["polling", "websocket"]), required: true),
                              P(query: "sid", "The session id (after the handshake).", schema: S.string)]

    public static let operations: [OpenAPIOperation] = [
        // Auth and users
        Op(.POST, "/api/auth/register", tag: "Auth", summary: "Create an account and get a token", security: .none,
           request: S.ref("RegisterRequest"), responses: [data(201, "Registered", S.ref("Session"))], errors: [400, 409, 415, 429]),
        Op(.POST, "/api/auth/login", tag: "Auth", summary: "Log in", description: "Wrong credentials answer 401 with the same message whether the user exists or not.",
           security: .none, request: S.ref("LoginRequest"), responses: [data(200, "Logged in", S.ref("Session"))], errors: [400, 401, 415, 429]),
        Op(.GET, "/api/auth/me", tag: "Auth", summary: "The caller", responses: [data(200, "The caller's public user", S.ref("User"))], errors: [401]),
        Op(.POST, "/api/auth/refresh", tag: "Auth", summary: "A fresh token for a valid one",
           description: "Send the current token as Authorization: Bearer. The answer has a new token (new iat and exp, auth.tokenLifetimeSeconds) "
               + "for the same user; the old one stays valid until it expires or the user logs out. An expired or revoked token is 401: log in again.",
           responses: [data(200, "A fresh session", S.ref("Session"))], errors: [401]),
        Op(.POST, "/api/auth/logout", tag: "Auth", summary: "Revoke every token of the caller",
           description: "Increments the caller's token version: every token issued to the caller so far, on any device, is refused with 401 "
               + "from now on (REST and new Socket.IO connections), and the caller's connected sockets get a Socket.IO DISCONNECT. Log in again for a new token.",
           responses: [data(200, "Logged out", S.ref("LoggedOut"))], errors: [401]),
        Op(.DELETE, "/api/auth/me", tag: "Auth", summary: "Delete the caller's account and personal data",
           description: "Needs the caller's password. In one transaction: the caller's reactions, elements, messages, posts, likes, saves, devices, "
               + "notifications and memberships are deleted, rooms the caller alone belonged to are deleted, shared rooms stay (one the caller created "
               + "passes to its earliest remaining member). Other members get element:reaction:removed (with the new stats) for each heart and "
               + "element:deleted / element:deleted:global for each element. Every token of the caller is refused with 401 from then on and the caller's "
               + "sockets get a Socket.IO DISCONNECT. A wrong password is 401 and deletes nothing; wrong passwords count against the login throttle "
               + "(auth.maxFailedLogins per username and client address: 429 with Retry-After past it).",
           request: S.ref("DeleteAccountRequest"), responses: [data(200, "Deleted", S.ref("AccountDeleted"))], errors: [400, 401, 415]),
        Op(.GET, "/api/auth/me/export", tag: "Auth", summary: "Everything stored about the caller, as JSON",
           description: "The profile (never the password hash), rooms, memberships, elements, reactions, messages, posts, likes, saves, devices and "
               + "notifications, from one consistent snapshot. A section holds at most 50000 rows; one that reaches it is named in truncated.",
           responses: [data(200, "The caller's data", S.ref("AccountExport"))], errors: [401]),

        // Rooms
        Op(.POST, "/api/rooms", tag: "Rooms", summary: "Create a room (the creator is a member)",
           description: "Without a name the room is named after its creation date and time, with nameSetBy null.",
           request: S.ref("CreateRoomRequest"), requestRequired: false, responses: [data(201, "Created", S.ref("Room"))], errors: [400, 401, 404, 415, 429]),
        Op(.GET, "/api/rooms/my-rooms", tag: "Rooms", summary: "The caller's rooms, most recently active first",
           responses: [data(200, "Rooms with the caller's badges", S.array(S.ref("Room")))], errors: [401]),
        Op(.GET, "/api/rooms/:roomId", tag: "Rooms", summary: "A room with its members and elements",
           responses: [data(200, "The room", S.ref("RoomDetail"))], errors: [401, 403, 404]),
        Op(.PATCH, "/api/rooms/:roomId", tag: "Rooms", summary: "Rename a room", description: "Emits room:updated.",
           request: S.ref("RenameRoomRequest"), responses: [data(200, "The renamed room", S.ref("Room"))], parameters: [socketHeader],
           errors: [400, 401, 403, 404, 415, 429]),
        Op(.POST, "/api/rooms/:roomId/members", tag: "Rooms", summary: "Add a member by userId or username",
           request: S.ref("AddMemberRequest"), responses: [data(201, "Added", S.ref("MemberAdded"))], errors: [400, 401, 403, 404, 409, 415, 429]),
        Op(.DELETE, "/api/rooms/:roomId/members/me", tag: "Rooms", summary: "Leave a room",
           responses: [data(200, "Left", S.ref("MemberLeft"))], errors: [401, 403, 404, 429]),
        Op(.POST, "/api/rooms/:roomId/seen", tag: "Rooms", summary: "Reset the caller's badges.elements",
           responses: [data(200, "The room as the caller now sees it", S.ref("Room"))], errors: [401, 403, 404, 429]),

        // Elements
        Op(.GET, "/api/rooms/:roomId/elements", tag: "Elements", summary: "A room's elements, oldest first",
           responses: [data(200, "Elements", S.array(S.ref("Element")))], errors: [401, 403, 404]),
        Op(.POST, "/api/rooms/:roomId/elements", tag: "Elements", summary: "Create an element",
           description: "Emits element:created to the room and element:created:global.",
           request: S.ref("CreateElementRequest"), responses: [data(201, "Created", S.ref("Element"))], parameters: [socketHeader],
           errors: [400, 401, 403, 404, 415, 429]),
        Op(.DELETE, "/api/rooms/:roomId/elements", tag: "Elements", summary: "Clear the room",
           description: "Emits room:cleared and room:cleared:global.",
           responses: [data(200, "Elements deleted", S.ref("RoomCleared"))], parameters: [socketHeader], errors: [401, 403, 404, 429]),
        Op(.PATCH, "/api/rooms/:roomId/elements/:elementId", tag: "Elements", summary: "Update any subset of an element's mutable fields",
           description: "Emits element:updated.", request: S.ref("UpdateElementRequest"),
           responses: [data(200, "Updated", S.ref("Element"))], parameters: [socketHeader], errors: [400, 401, 403, 404, 415, 429]),
        Op(.DELETE, "/api/rooms/:roomId/elements/:elementId", tag: "Elements", summary: "Delete an element",
           description: "Emits element:deleted and element:deleted:global.",
           responses: [data(200, "Deleted", S.ref("ElementDeleted"))], parameters: [socketHeader], errors: [401, 403, 404, 429]),

        // Reactions
        Op(.POST, "/api/rooms/:roomId/elements/:elementId/reactions/toggle", tag: "Reactions", summary: "Add or remove the caller's heart",
           description: "Idempotent under concurrency. Emits element:reaction:added or element:reaction:removed (stats per recipient).",
           responses: [data(200, "What the toggle did", S.ref("ToggleResult"))], parameters: [socketHeader], errors: [401, 403, 404, 429]),
        Op(.GET, "/api/rooms/:roomId/elements/:elementId/reactions", tag: "Reactions", summary: "An element's reactions, newest first",
           responses: [data(200, "A page of reactions", S.ref("ReactionPage"))], parameters: [limit50, before], errors: [400, 401, 403, 404]),

        // Messages
        Op(.POST, "/api/rooms/:roomId/messages", tag: "Messages", summary: "Send a message", description: "Emits message:created.",
           request: S.ref("SendMessageRequest"), responses: [data(201, "Sent", S.ref("Message"))], parameters: [socketHeader],
           errors: [400, 401, 403, 404, 415, 429]),
        Op(.GET, "/api/rooms/:roomId/messages", tag: "Messages", summary: "A room's messages, newest first",
           responses: [data(200, "A page of messages", S.array(S.ref("Message")))], parameters: [limit50, before], errors: [400, 401, 403, 404]),
        Op(.POST, "/api/rooms/:roomId/messages/read", tag: "Messages", summary: "Reset the caller's badges.messages",
           responses: [data(200, "The room as the caller now sees it", S.ref("Room"))], errors: [401, 403, 404, 429]),

        // Posts (mobile envelope)
        Op(.POST, "/api/mobile/posts", tag: "Posts", summary: "Create a post", envelope: .mobile, request: S.ref("CreatePostRequest"),
           responses: [mobile(201, "Post created", S.ref("Post"))], errors: [400, 401, 415, 429]),
        Op(.POST, "/api/mobile/posts/:postId/like", tag: "Posts", summary: "Like a post (idempotent)", envelope: .mobile,
           responses: [mobile(200, "Post liked", S.ref("PostInteractionState"))], errors: [401, 404, 429]),
        Op(.DELETE, "/api/mobile/posts/:postId/like", tag: "Posts", summary: "Unlike a post (idempotent)", envelope: .mobile,
           responses: [mobile(200, "Post unliked", S.ref("PostInteractionState"))], errors: [401, 404, 429]),
        Op(.POST, "/api/mobile/posts/:postId/save", tag: "Posts", summary: "Save a post (idempotent)", envelope: .mobile,
           responses: [mobile(200, "Post saved", S.ref("PostInteractionState"))], errors: [401, 404, 429]),
        Op(.DELETE, "/api/mobile/posts/:postId/save", tag: "Posts", summary: "Unsave a post (idempotent)", envelope: .mobile,
           responses: [mobile(200, "Post unsaved", S.ref("PostInteractionState"))], errors: [401, 404, 429]),
        Op(.POST, "/api/mobile/posts/interaction-state", tag: "Posts", summary: "Like/save state of up to 50 posts",
           description: "Answered from one SQL query. Duplicate ids are answered once; unknown ids are left out.",
           envelope: .mobile, request: S.ref("InteractionStateRequest"),
           responses: [Body(200, "Interaction states retrieved successfully", schema: S.ref("InteractionStateResponse"))], errors: [400, 401, 415]),

        // Devices and notifications
        Op(.POST, "/api/devices", tag: "Notifications", summary: "Register a push token", request: S.ref("RegisterDeviceRequest"),
           responses: [data(201, "Registered", S.ref("Device"))], errors: [400, 401, 415, 429]),
        Op(.DELETE, "/api/devices/:token", tag: "Notifications", summary: "Unregister a push token",
           responses: [data(200, "Unregistered", S.ref("DeviceDeleted"))], errors: [401, 404]),
        Op(.GET, "/api/notifications", tag: "Notifications", summary: "The caller's notifications, newest first",
           responses: [data(200, "Notifications", S.array(S.ref("Notification")))], parameters: [limit50], errors: [400, 401]),

        // Operations
        Op(.GET, "/health", tag: "Operations", summary: "Liveness and database check", security: .none, envelope: .none,
           responses: [Body(200, "Healthy", schema: S.ref("Health")), Body(503, "The database does not answer", schema: S.ref("Health"))]),
        Op(.GET, "/metrics", tag: "Operations", summary: "Prometheus metrics",
           description: "Text exposition format 0.0.4. Answers this machine (loopback TCP peer, not forwarded for another client), "
               + "addresses in metrics.allowFrom, and Authorization: Bearer <metrics.token>.", security: .none, envelope: .none,
           responses: [Body(200, "Metrics", schema: S.string, contentType: PrometheusText.contentType),
                       Body(401, "A bearer token that is not metrics.token", schema: S.ref("Error")),
                       Body(403, "Not this machine, not in metrics.allowFrom, no token; the message says how to open it", schema: S.ref("Error"))]),
        Op(.GET, "/openapi.json", tag: "Operations", summary: "This document", security: .none, envelope: .none,
           responses: [Body(200, "OpenAPI 3.1", schema: ["type": "object"])]),
        Op(.GET, "/asyncapi.json", tag: "Operations", summary: "The Socket.IO events as an AsyncAPI 3.0.0 document", security: .none, envelope: .none,
           responses: [Body(200, "AsyncAPI 3.0.0", schema: ["type": "object"])]),

        // Socket.IO (docs/realtime.md): the Engine.IO transport answers every method on its path.
        Op(.GET, "/socket.io/*", tag: "Realtime", summary: "Engine.IO v4 / Socket.IO v5: polling GET and WebSocket upgrade",
           description: "Not a REST route: see docs/realtime.md for the events. Authenticate with the CONNECT auth {token}, ?token= or Authorization: Bearer.",
           security: .none, envelope: .none, responses: [Body(200, "Engine.IO packets (polling)", schema: S.string, contentType: "text/plain; charset=UTF-8"),
                                                         Body(101, "Switching Protocols (WebSocket)", schema: nil), engineError],
           parameters: engineQuery),
        Op(.POST, "/socket.io/*", tag: "Realtime", summary: "Engine.IO v4: polling POST (client to server packets)", security: .none, envelope: .none,
           responses: [Body(200, "ok", schema: S.string, contentType: "text/html"), engineError], parameters: engineQuery),
        Op(.OPTIONS, "/socket.io/*", tag: "Realtime", summary: "CORS preflight of the polling transport", security: .none, envelope: .none,
           responses: [Body(204, "Preflight answered", schema: nil)]),
    ] + ["PUT", "DELETE", "PATCH", "HEAD"].map { m in
        Op(HTTPMethod(rawValue: m), "/socket.io/*", tag: "Realtime", summary: "Not an Engine.IO method: answered 400 like the reference server",
           security: .none, envelope: .none, responses: [engineError])
    } + [
        // Test-target mode (docs/test-mode.md); registered only with serve --test-mode.
        Op(.POST, "/api/test/reset", tag: "Test mode", summary: "Empty all data and disconnect every socket",
           description: "Only with --test-mode (404 otherwise)." + testModeAccess + " In a cluster every test-mode node "
               + "drops its sockets and events before the answer; 504 names the live nodes that did not confirm.", security: .none,
           responses: [data(200, "Reset", S.ref("TestResetResult"))], errors: [401, 403, 504]),
        Op(.POST, "/api/test/fixtures", tag: "Test mode", summary: "Load users, rooms, elements, reactions, messages, posts, likes and saves",
           description: "Only with --test-mode." + testModeAccess + " The document is checked before the first write (400 changes nothing).",
           security: .none, request: S.ref("FixtureDocument"), responses: [data(201, "Loaded", S.ref("FixtureResult"))],
           errors: [400, 401, 403, 409, 415, 504]),
        Op(.GET, "/api/test/events", tag: "Test mode", summary: "The realtime events the server emitted, in order",
           description: "Only with --test-mode." + testModeAccess + " From a bounded ring buffer (realtime.eventLogCapacity).", security: .none,
           responses: [data(200, "Events after `since`", S.ref("RealtimeEventPage"))],
           parameters: [P(query: "since", "Only events with seq > since (default 0).", schema: ["type": "integer", "minimum": 0, "maximum": int64Max]),
                        P(query: "limit", "At most this many (1-10000, default 1000).", schema: ["type": "integer", "minimum": 1, "maximum": 10_000]),
                        P(query: "event", "Only this event name.", schema: S.string),
                        P(query: "roomId", "Only events addressed to, or about, this room.", schema: S.string),
                        P(query: "wait", "Long-poll: while no event matches, hold the request until one is logged or this duration "
                            + "passes (250ms, 5s, or a number of seconds; at most 30s; default 0, answer at once). Then answers as usual, "
                            + "with no events when the wait ran out. 503 when 256 requests are already waiting.",
                          schema: ["type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?(ms|s)?$", "maxLength": 16])],
           errors: [400, 401, 403]),
        Op(.POST, "/api/test/faults", tag: "Test mode", summary: "Inject a network fault into the sockets of a user or an Engine.IO session",
           description: "Only with --test-mode." + testModeAccess + " disconnect (transport close, ping timeout, transport error, server disconnect), "
               + "delay, drop, hold, release, clear; only Socket.IO packets are faulted, never the Engine.IO heartbeat. See docs/test-mode.md.",
           security: .none, request: S.ref("TestFaultRequest"), responses: [data(200, "Applied", S.ref("TestFaultResult"))],
           errors: [400, 401, 403, 404, 415]),
        Op(.POST, "/api/test/limits", tag: "Test mode", summary: "Turn the write limits on or off",
           description: "Only with --test-mode, where the write limits (limits.*, sign-ups per address included) start off: an app's test set-up "
               + "is a burst. {\"enabled\": true} applies the configured rules with every budget full, so a test can check the app's handling of 429 "
               + "RATE_LIMITED; POST /api/test/reset turns them off again. Per node." + testModeAccess, security: .none,
           request: S.ref("TestLimitsRequest"), responses: [data(200, "The limits' state", S.ref("TestLimits"))], errors: [400, 401, 403, 415]),
        Op(.GET, "/api/test/clock", tag: "Test mode", summary: "The domain's clock and how far it was moved",
           description: "Only with --test-mode." + testModeAccess, security: .none,
           responses: [data(200, "The clock", S.ref("TestClock"))], errors: [401, 403]),
        Op(.POST, "/api/test/clock", tag: "Test mode", summary: "Move the domain's clock: advance, set or reset",
           description: "Only with --test-mode. Every domain time reads it: token issue, expiry and nbf and their checks, createdAt and "
               + "updatedAt, notification pruning, the write limits' buckets; never the Engine.IO heartbeats. POST /api/test/reset puts "
               + "it back. In a cluster every test-mode node takes the same offset before the answer." + testModeAccess, security: .none,
           request: S.ref("TestClockRequest"), responses: [data(200, "The clock after the move", S.ref("TestClock"))],
           errors: [400, 401, 403, 415, 504]),
        Op(.GET, "/api/test/faults", tag: "Test mode", summary: "The faults active on each session", description: "Only with --test-mode." + testModeAccess,
           security: .none, responses: [data(200, "Active faults", S.ref("TestFaultList"))], errors: [401, 403]),
    ] + InspectorOperations.openAPIOperations  // the live inspector (Sources/TSInspector), unless --no-inspector
}
