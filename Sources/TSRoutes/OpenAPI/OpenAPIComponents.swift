import TSContract
import TSDomain
import TSJSON

/// `components.schemas` of the OpenAPI document: every object of docs/api.md, the request
/// bodies of its routes, the envelopes and errors, and the test-mode documents (docs/test-mode.md).
enum OpenAPIComponents {
    typealias S = OpenAPISchema

    static let userProperties: [(String, JSONValue)] = [
        ("id", S.id), ("username", S.string), ("firstName", S.nullable(S.string)), ("avatarUrl", S.nullable(S.string)),
    ]

    static let roomProperties: [(String, JSONValue)] = [
        ("id", S.id), ("name", S.string), ("createdBy", S.id), ("createdAt", S.dateTime), ("updatedAt", S.dateTime),
        ("isActive", S.boolean), ("nameSetBy", S.nullable(S.id)), ("nameSetByUser", S.nullable(S.ref("User"))),
        ("elementCount", S.describe(S.integer, "Elements in the room now.")),
        ("badges", S.ref("Badges")),
        ("hasUnread", S.describe(S.boolean, "Either badge > 0.")),
    ]

    static let statsProperties: [(String, JSONValue)] = [
        ("totalReactions", S.integer), ("count", S.describe(S.integer, "Equals totalReactions.")), ("hasReacted", S.boolean),
        ("userReaction", S.nullable(S.enumeration(["heart"]))), ("topReactors", S.array(S.ref("User"), maxItems: 3)),
    ]

    static var schemas: JSONObject {
        var s = JSONObject()

        // §0 envelopes and errors
        s["Error"] = S.object([
            ("error", S.object([("code", S.ref("ErrorCode")), ("message", S.string),
                                ("field", S.describe(S.string, "The offending input field (400 only)."))], optional: ["field"])),
        ], description: "Error envelope of every route under /api/ except /api/mobile/.")
        s["MobileError"] = S.object([
            ("success", S.constant(false)), ("message", S.string), ("error", S.string), ("code", S.ref("ErrorCode")),
            ("field", S.string),
        ], optional: ["field"], description: "Error envelope of /api/mobile/**, the mobile clients' own format.")
        s["ErrorCode"] = S.describe(S.string, "VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, METHOD_NOT_ALLOWED, CONFLICT, "
                                        + "PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, RATE_LIMITED, INTERNAL, UNAVAILABLE, SERVICE_UNAVAILABLE, ...")

        s["EngineIOError"] = S.object([("code", S.integer), ("message", S.string)],
                                      description: "Error of the Engine.IO transport, as the reference server sends it (code 0-5).")

        // §1 objects
        s["User"] = S.object(userProperties, description: "A user as other users see them.")
        s["Session"] = S.object([("token", S.describe(S.string, "HS256 JWT: claims sub, iat, exp, and ver (the user's token version, absent while 0).")),
                                 ("user", S.ref("User"))])
        s["Badges"] = S.object([
            ("messages", S.describe(S.integer, "Messages by other users after the caller's read marker.")),
            ("elements", S.describe(S.integer, "Elements created by other users after the caller last saw the room.")),
        ])
        s["Room"] = S.object(roomProperties, description: "A room as the caller sees it (badges are the caller's).")
        s["RoomDetail"] = S.object(roomProperties + [("members", S.array(S.ref("User"))), ("elements", S.array(S.ref("Element")))])
        s["ElementType"] = S.enumeration(ElementType.allCases.map(\.rawValue))
        s["ElementReactions"] = S.object([
            ("count", S.integer), ("hasReacted", S.boolean), ("userReaction", S.nullable(S.enumeration(["heart"]))),
            ("topReactors", S.describe(S.array(S.ref("User"), maxItems: 3), "Most recent reactor first.")),
        ], description: "The element's reaction summary for the requesting user.")
        s["Element"] = S.object([("id", S.id), ("roomId", S.id)] + ElementSchema.mutableProperties.prefix(5) + [("createdBy", S.id)]
            + ElementSchema.mutableProperties.dropFirst(5)
            + [("createdAt", S.dateTime), ("updatedAt", S.dateTime),
               ("reactions", S.describe(S.nullable(S.ref("ElementReactions")), "null while the element has no reactions."))])
        s["Reaction"] = S.object([
            ("id", S.id), ("elementId", S.id), ("userId", S.id), ("type", S.enumeration(["heart"])), ("createdAt", S.dateTime), ("user", S.ref("User")),
        ])
        s["ElementStats"] = S.object(statsProperties)
        s["ToggleResult"] = S.object([
            ("action", S.enumeration(["added", "removed"])),
            ("reaction", S.describe(S.ref("Reaction"), "On removed, the reaction that was removed.")),
            ("elementStats", S.ref("ElementStats")),
        ])
        s["ReactionPage"] = S.object([("reactions", S.array(S.ref("Reaction"))), ("total", S.integer), ("hasReacted", S.boolean)])
        s["Message"] = S.object([("id", S.id), ("roomId", S.id), ("userId", S.id), ("text", S.string), ("createdAt", S.dateTime), ("user", S.ref("User"))])
        s["Post"] = S.object([("id", S.id), ("authorId", S.id), ("content", S.string), ("imageUrl", S.nullable(S.string)),
                              ("likeCount", S.integer), ("saveCount", S.integer), ("createdAt", S.dateTime)])
        s["PostInteractionState"] = S.object([("postId", S.id), ("isLiked", S.boolean), ("isSaved", S.boolean),
                                              ("likeCount", S.integer), ("saveCount", S.integer)])
        s["InteractionStates"] = S.object([
            ("interactions", S.describe(S.array(S.ref("PostInteractionState")), "In request order; duplicates once; unknown ids left out.")),
            ("totalPosts", S.integer), ("totalLiked", S.integer), ("totalSaved", S.integer),
        ], description: "The data of the interaction-state response.")
        s["InteractionStateResponse"] = S.mobileEnvelope(S.ref("InteractionStates"))
        s["Device"] = S.object([("token", S.string), ("platform", S.enumeration(["ios", "android"])), ("userId", S.id)])
        s["Notification"] = S.object([
            ("id", S.id), ("type", S.enumeration(["element_reaction", "element_created"])), ("roomId", S.nullable(S.id)),
            ("elementId", S.nullable(S.id)), ("actorId", S.nullable(S.id)), ("createdAt", S.dateTime), ("delivered", S.boolean),
        ])
        s["Health"] = S.object([("status", S.enumeration(["ok", "degraded"])), ("version", S.string), ("uptimeSeconds", S.integer),
                                ("database", S.enumeration(["ok", "error", "unavailable"])),
                                // redis is present when realtime.redisUrl is set; degradedReason says why when
                                // status is degraded (database unreachable, Redis down).
                                ("redis", S.enumeration(["ok", "down"])), ("backup", S.ref("BackupStatus")), ("degradedReason", S.string)],
                               optional: ["redis", "backup", "degradedReason"])
        // Present when backup.directory is set (docs/backup.md): the last scheduled backup.
        s["BackupStatus"] = S.object([("status", S.enumeration(["pending", "ok", "failed"])), ("directory", S.string),
                                      ("at", S.dateTime), ("file", S.string), ("bytes", S.integer), ("error", S.string)],
                                     optional: ["at", "file", "bytes", "error"])

        // Small results
        s["MemberAdded"] = S.object([("roomId", S.id), ("user", S.ref("User"))])
        s["MemberLeft"] = S.object([("roomId", S.id), ("userId", S.id)])
        s["ElementDeleted"] = S.object([("id", S.id)])
        s["RoomCleared"] = S.object([("roomId", S.id), ("deleted", S.integer)])
        s["DeviceDeleted"] = S.object([("token", S.string)])
        s["AccountDeleted"] = S.object([("userId", S.id), ("deleted", S.constant(true)), ("roomsDeleted", S.integer), ("elementsDeleted", S.integer),
                                        ("reactionsDeleted", S.integer), ("messagesDeleted", S.integer)],
                                       description: "What the deletion removed; the rooms counted are those the caller alone belonged to.")
        let row = S.object([], open: true)
        s["AccountExport"] = S.object([
            ("exportedAt", S.dateTime),
            ("user", S.object([("id", S.id), ("username", S.string), ("firstName", S.nullable(S.string)), ("avatarUrl", S.nullable(S.string)),
                               ("createdAt", S.dateTime)])),
            ("rooms", S.array(S.ref("Room"))), ("memberships", S.array(row)), ("elements", S.array(S.ref("Element"))),
            ("reactions", S.array(row)), ("messages", S.array(row)), ("posts", S.array(row)), ("likes", S.array(row)), ("saves", S.array(row)),
            ("devices", S.array(row)), ("notifications", S.array(row)),
            ("truncated", S.describe(S.array(S.string), "Sections that reached 50000 rows and were cut there.")),
        ])
        s["LoggedOut"] = S.object([("userId", S.id), ("loggedOut", S.constant(true))],
                                  description: "Every token issued to the user before this request is revoked.")

        // §2 request bodies. RequestValidation checks every request against these schemas
        // before the handler runs: each limit here is enforced, and each enforced limit is here.
        s["RegisterRequest"] = S.object([
            ("username", S.username), ("password", S.string(min: 8, max: 1024)),
            ("firstName", S.nullable(S.string(max: 100))), ("avatarUrl", S.nullable(S.string(max: 2048))),
        ], optional: ["firstName", "avatarUrl"])
        s["DeleteAccountRequest"] = S.object([("password", S.describe(S.string(min: 1, max: 1024), "The caller's current password."))])
        s["LoginRequest"] = S.object([("username", S.string(min: 1, max: 64)), ("password", S.string(min: 1, max: 1024))])
        s["CreateRoomRequest"] = S.object([
            ("name", S.describe(S.nullable(S.notBlank(max: 200)), "Without it (or null) the room is named after its creation date and time.")),
            ("memberIds", S.describe(S.array(S.id, maxItems: 100), "Users to add besides the creator (an unknown id is 404).")),
        ], optional: ["name", "memberIds"])
        s["RenameRoomRequest"] = S.object([("name", S.notBlank(max: 200))])
        var addMember = S.object([("userId", S.id), ("username", S.string(min: 1, max: 64))], optional: ["userId", "username"],
                                 description: "Either userId or username (userId wins when both are given).").objectValue ?? JSONObject()
        addMember["anyOf"] = [["required": ["userId"]], ["required": ["username"]]]
        s["AddMemberRequest"] = .object(addMember)
        s["CreateElementRequest"] = S.object(ElementSchema.mutableProperties, optional: ElementSchema.optional)
        s["UpdateElementRequest"] = S.object(ElementSchema.mutableProperties, optional: Set(ElementSchema.mutableProperties.map(\.0)),
                                             description: "Any subset of the mutable fields.")
        s["SendMessageRequest"] = S.object([("text", S.notBlank(max: 10_000))])
        s["CreatePostRequest"] = S.object([("content", S.string(min: 1, max: 10_000)), ("imageUrl", S.nullable(S.string(max: 4096)))],
                                          optional: ["imageUrl"])
        s["InteractionStateRequest"] = S.object([("postIds", ["type": "array", "items": S.string, "minItems": 1, "maxItems": 50])])
        s["RegisterDeviceRequest"] = S.object([("token", S.string(min: 1, max: 512)), ("platform", S.enumeration(["ios", "android"]))])

        // Test-target mode (docs/test-mode.md)
        s["TestResetResult"] = S.object([
            ("tables", S.describe(S.array(S.string), "The emptied tables, in the order they were emptied.")),
            ("disconnectedSockets", S.integer), ("durationMs", S.number),
            ("lastEventSequence", S.describe(S.integer, "Pass as ?since= to /api/test/events to see only later events (on any node of a cluster).")),
            ("nodes", S.describe(S.integer, "Nodes that applied the reset, this one included: 1 without realtime.redisUrl.")),
        ])
        s["TestLimitsRequest"] = S.object([("enabled", S.describe(S.boolean, "true: every write limit (limits.*) applies, each budget full; false: none does."))])
        s["TestLimits"] = S.object([("enabled", S.describe(S.boolean, "Whether the write limits apply now."))])
        s["TestClockRequest"] = S.object([
            ("advance", S.describe(S.string(min: 2, max: 16), "Move time by this much: 31d, 12h, 90m, 30s; a leading - moves it back.")),
            ("set", S.describe(S.string(min: 20, max: 40), "Make now this RFC 3339 date-time (time keeps running from there).")),
            ("reset", S.describe(S.boolean, "true: back to the real clock.")),
        ], optional: ["advance", "set", "reset"], description: "Exactly one of advance, set or reset.")
        s["TestClock"] = S.object([
            ("now", S.describe(S.string, "The domain's now (ISO 8601 UTC, seconds).")), ("nowMs", S.integer),
            ("offsetSeconds", S.describe(S.integer, "How far the domain's clock is from the real one (negative: in the past).")),
            ("moved", S.describe(S.boolean, "offsetSeconds is not 0.")),
        ])
        var faultRequest = S.object([
            ("action", S.describe(S.enumeration(TestModeLimits.faultActions), "What to do to the target's sockets (docs/test-mode.md, Faults).")),
            ("userId", S.describe(S.string(min: 1, max: 200), "Act on every socket of this user.")),
            ("sid", S.describe(S.string(min: 1, max: 200), "Act on the sockets of this Engine.IO session.")),
            ("reason", S.describe(S.enumeration(TestModeLimits.disconnectReasons), "disconnect: how the connection ends, as the client sees it.")),
            ("milliseconds", S.describe(["type": "integer", "minimum": 0, "maximum": .int(Int64(TestModeLimits.maxFaultDelayMilliseconds))],
                                        "delay: how late each outbound Socket.IO packet leaves (0 ends the delay).")),
            ("events", S.describe(["type": "array", "items": S.string(min: 1, max: 200), "minItems": 1, "maxItems": .int(Int64(TestModeLimits.maxDropEvents))],
                                  "drop: the event names to drop.")),
            ("count", S.describe(["type": "integer", "minimum": 1, "maximum": .int(Int64(TestModeLimits.maxDropCount))],
                                 "drop: how many matching events to drop (default 1).")),
        ], optional: ["userId", "sid", "reason", "milliseconds", "events", "count"],
           description: "userId or sid (not both) is required except for clear, which without either acts on every session.").objectValue ?? JSONObject()
        // The target rule as schema (a `false` property schema: the property must be absent), so
        // that a generated body the document accepts is one the route accepts.
        faultRequest["oneOf"] = [
            ["required": ["userId"], "properties": ["sid": false]],
            ["required": ["sid"], "properties": ["userId": false]],
            ["properties": ["action": ["const": "clear"], "userId": false, "sid": false]],
        ]
        // What each action needs besides its target, as schema too.
        faultRequest["allOf"] = .array([("disconnect", "reason"), ("delay", "milliseconds"), ("drop", "events")].map { action, field in
            ["if": ["properties": ["action": ["const": .string(action)]], "required": ["action"]], "then": ["required": [.string(field)]]]
        })
        s["TestFaultRequest"] = .object(faultRequest)
        s["TestFaultResult"] = S.object([
            ("action", S.string), ("reason", S.nullable(S.string)),
            ("sessions", S.describe(S.array(S.string), "The Engine.IO sessions the action was applied to.")),
        ])
        s["TestFault"] = S.object([
            ("sid", S.string), ("userId", S.nullable(S.id)), ("socketIds", S.array(S.string)),
            ("delayMilliseconds", S.integer), ("holding", S.boolean), ("dropEvents", S.array(S.string)), ("dropRemaining", S.integer),
            ("silenced", S.describe(S.boolean, "A ping-timeout disconnect in progress: nothing is sent until the client gives up.")),
            ("queuedPackets", S.integer), ("queuedBytes", S.describe(S.integer, "Held or delayed; past realtime.faultMaxBufferedBytes the socket is dropped.")),
        ])
        s["TestFaultList"] = S.object([("faults", S.array(S.ref("TestFault")))])
        let ref: JSONValue = S.describe(S.string(min: 1, max: 200), "A client-chosen key other objects of the document use to refer to this one.")
        let to: JSONValue = S.describe(S.string(min: 1, max: 200), "The ref of an object of this document.")
        func list(_ item: JSONValue) -> JSONValue { S.array(item, maxItems: TestModeLimits.maxFixtureObjectsPerKind) }
        var fixtureDocument = S.object([
            ("users", list(S.object([("ref", ref), ("username", S.username), ("password", S.string(min: 8, max: 1024)),
                                     ("passwordHash", S.describe(S.string(min: 1, max: 1024), "Instead of password: a stored hash (touchsync export).")),
                                     ("firstName", S.nullable(S.string(max: 100))), ("avatarUrl", S.nullable(S.string(max: 2048)))],
                                    optional: ["ref", "password", "passwordHash", "firstName", "avatarUrl"]))),
            ("rooms", list(S.object([("ref", ref), ("name", S.nullable(S.string(max: 200))), ("createdBy", to),
                                     ("members", S.array(to))], optional: ["name", "members"]))),
            ("elements", list(S.object([("ref", ref), ("room", to), ("createdBy", to)] + ElementSchema.mutableProperties,
                                       optional: ElementSchema.optional.union(["ref", "positionX", "positionY", "width", "height"])))),
            ("reactions", list(S.object([("element", to), ("user", to)]))),
            ("messages", list(S.object([("ref", ref), ("room", to), ("user", to), ("text", S.string(min: 1, max: 10_000))], optional: ["ref"]))),
            ("posts", list(S.object([("ref", ref), ("author", to), ("content", S.string(min: 1, max: 10_000)), ("imageUrl", S.nullable(S.string(max: 4096)))],
                                    optional: ["ref", "imageUrl"]))),
            ("likes", list(S.object([("post", to), ("user", to)]))),
            ("saves", list(S.object([("post", to), ("user", to)]))),
            ("devices", list(S.object([("user", to), ("token", S.string(min: 1, max: 512)), ("platform", S.enumeration(["ios", "android"]))]))),
        ], optional: Set(TestModeLimits.fixtureKinds),
           description: "Objects refer to each other by ref (users default to their username); a ref to no object of the document is 400. "
               + "Keys starting with _ or $ (comments, $schema) are ignored. See docs/test-mode.md.").objectValue ?? JSONObject()
        fixtureDocument["patternProperties"] = ["^[_$]": .object([:])]
        s["FixtureDocument"] = .object(fixtureDocument)
        let idsByRef = S.map(S.id, description: "Ids by ref.")
        s["FixtureResult"] = S.object([
            ("users", S.map(S.object([("id", S.id), ("username", S.string), ("token", S.string)]), description: "Each user by ref, with a bearer token.")),
            ("rooms", idsByRef), ("elements", idsByRef), ("messages", idsByRef), ("posts", idsByRef),
            ("counts", S.map(S.integer, description: "Objects created, by kind.")),
            ("lastEventSequence", S.integer),
        ])
        s["RealtimeEventTarget"] = S.object([
            ("type", S.enumeration(["room", "user", "socket"])), ("name", S.string), ("roomId", S.id), ("userId", S.nullable(S.id)),
            ("socketId", S.string),
        ], optional: ["name", "roomId", "userId", "socketId"],
           description: "room: a TouchSync room (name room:<id>); user: every socket of a user (name user:<id>); socket: one socket.")
        s["RealtimeEvent"] = S.object([
            ("seq", S.integer), ("event", S.string), ("payload", S.describe(["type": "object"], "The first (only) argument: see docs/realtime.md.")),
            ("args", S.array(["type": "object"])), ("target", S.ref("RealtimeEventTarget")),
            ("except", S.describe(S.nullable(S.string), "The originating socket, skipped by a room emit.")),
            ("recipients", S.describe(S.integer, "Sockets the event was handed to.")), ("timestampMs", S.integer),
            ("dropped", S.describe(S.boolean, "Present (true) when a drop fault (POST /api/test/faults) kept the event from a socket.")),
            ("droppedSessions", S.describe(S.array(S.string), "The Engine.IO sessions it was dropped for.")),
        ], optional: ["dropped", "droppedSessions"])
        s["RealtimeEventPage"] = S.object([
            ("events", S.array(S.ref("RealtimeEvent"))), ("lastSequence", S.integer),
            ("missed", S.describe(S.integer, "Events after `since` already evicted from the ring buffer.")), ("capacity", S.integer),
        ])
        return s
    }
}
