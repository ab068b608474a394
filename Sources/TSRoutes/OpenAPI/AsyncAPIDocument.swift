import TSContract
import TSJSON
import TSRealtime

/// The AsyncAPI 3.0.0 document of the Socket.IO events (`GET /asyncapi.json`), generated from
/// `RealtimeEvents.all`. How Socket.IO maps onto it (the AsyncAPI spec has no Socket.IO binding):
/// each message is the first (only) argument of a Socket.IO EVENT packet whose event name is the
/// message's `name`; a `receive` operation is an event the server handles, its `reply` the
/// argument of the ACK; a `send` operation is an event the server emits, on the channel of its
/// audience (`room:<roomId>`, `user:<userId>`, or the one joining socket). Those channels' address
/// is null ("dynamic", AsyncAPI 3.0.0 Channel Object) with the Socket.IO room named in
/// `x-socketio-room`: an address expression would need each parameter's `location` in every
/// message's payload, and `roomId` is not at one place in all of them. Payload schemas are
/// JSON Schema whose `$ref`s resolve in `components.schemas`: the same objects as `/openapi.json`.
public enum AsyncAPIDocument {
    /// `room:join` → `room.join` (component keys allow only `[A-Za-z0-9._-]`).
    public static func key(_ eventName: String) -> String { eventName.replacingOccurrences(of: ":", with: ".") }

    static func channelKey(_ declaration: RealtimeEventDeclaration) -> String {
        switch declaration.audience {
        case nil: return "namespace"
        case .room?: return "room"
        case .members?: return "user"
        case .joiningSocket?: return "socket"
        }
    }

    public static func build(version: String, events: [RealtimeEventDeclaration] = RealtimeEvents.all) -> JSONValue {
        var channels: JSONObject = [
            "namespace": ["address": "/", "title": "Socket.IO namespace /",
                          "description": "The default namespace at /socket.io/ (Engine.IO v4, Socket.IO v5; polling and websocket). Authenticate with the CONNECT auth {\"token\": \"<jwt>\"}, ?token= or Authorization: Bearer. Every client event is sent here; its ack answers on it.",
                          "messages": .object(JSONObject())],
            "room": ["address": .null, "x-socketio-room": "room:<roomId>", "title": "A room's broadcasts",
                     "description": "The Socket.IO room room:<roomId>: the sockets that sent room:join for the room, except the socket whose request caused the event (its own socket, or the one a REST request names with X-Socket-Id).",
                     "messages": .object(JSONObject())],
            "user": ["address": .null, "x-socketio-room": "user:<userId>", "title": "Every socket of a member",
                     "description": "The Socket.IO rooms user:<userId> of the room's members: every socket of every member (realtime.globalEvents: members, the default), or every connected socket (all); the originating socket included.",
                     "messages": .object(JSONObject())],
            "socket": ["address": .null, "title": "The joining socket",
                       "description": "The one socket whose room:join this answers, before the ack.", "messages": .object(JSONObject())],
        ]
        var operations = JSONObject()
        var messages = JSONObject()
        // `examples`: AsyncAPI 3.0.0 Message Object, a list of Message Example Objects; the one
        // here is the payload type's declared `example` as it goes on the wire.
        func addMessage(_ key: String, name: String, title: String, summary: String, payload: JSONValue, example: JSONValue, channel: String) {
            messages[key] = .object(["name": .string(name), "title": .string(title), "summary": .string(summary),
                                     "contentType": "application/json", "payload": payload,
                                     "examples": [.object(["payload": example])]])
            var c = channels[channel]?.objectValue ?? JSONObject()
            var m = c["messages"]?.objectValue ?? JSONObject()
            m[key] = .object(["$ref": .string("#/components/messages/\(key)")])
            c["messages"] = .object(m)
            channels[channel] = .object(c)
        }
        for e in events {
            let key = key(e.name)
            let channel = channelKey(e)
            addMessage(key, name: e.name, title: e.name, summary: e.summary, payload: e.payload, example: e.payloadExample, channel: channel)
            var op: JSONObject = [
                "action": .string(e.direction == .clientToServer ? "receive" : "send"),
                "channel": .object(["$ref": .string("#/channels/\(channel)")]),
                "title": .string(e.name), "summary": .string(e.summary),
                "messages": [.object(["$ref": .string("#/channels/\(channel)/messages/\(key)")])],
            ]
            if let ack = e.ack, let ackExample = e.ackExample {
                let ackKey = key + ".ack"
                addMessage(ackKey, name: e.name, title: "\(e.name) ack",
                           summary: "The ack of \(e.name): the result, or {\"error\": {code, message}} with the REST error codes.",
                           payload: ["anyOf": [ack, OpenAPISchema.ref("Error")]], example: ackExample, channel: channel)
                op["reply"] = .object(["channel": .object(["$ref": .string("#/channels/\(channel)")]),
                                       "messages": [.object(["$ref": .string("#/channels/\(channel)/messages/\(ackKey)")])]])
            }
            operations[key] = .object(op)
        }
        // Only the schemas the payloads use, and those they use in turn.
        let all = OpenAPIComponents.schemas
        var used = JSONObject()
        var pending = messages.pairs.flatMap { refs(in: $0.value) }
        while let name = pending.popLast() {
            guard used[name] == nil, let schema = all[name] else { continue }
            used[name] = schema
            pending += refs(in: schema)
        }
        let schemas = JSONObject(used.pairs.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return .object([
            "asyncapi": "3.0.0",
            "info": .object([
                "title": "TouchSync realtime API", "version": .string(version),
                "description": .string("The Socket.IO events of the TouchSync server (docs/api.md \"Socket.IO\", docs/realtime.md). A message is the first argument of a Socket.IO EVENT named by its name; a reply is the first argument of the ACK. The REST part is /openapi.json."),
                "license": ["name": "See the repository"],
            ]),
            "defaultContentType": "application/json",
            "channels": .object(channels),
            "operations": .object(operations),
            "components": .object(["messages": .object(messages), "schemas": .object(schemas)]),
        ])
    }

    /// The component names `value` refers to (`#/components/schemas/<name>`).
    static func refs(in value: JSONValue) -> [String] {
        switch value {
        case .object(let o):
            var out: [String] = []
            for (k, v) in o.pairs {
                if k == "$ref", let r = v.stringValue, r.hasPrefix("#/components/schemas/") {
                    out.append(String(r.dropFirst("#/components/schemas/".count)))
                } else {
                    out += refs(in: v)
                }
            }
            return out
        case .array(let a): return a.flatMap(refs)
        default: return []
        }
    }
}
