import TSDomain
import TSEngineIO
import TSHTTP
import TSJSON
import TSRoutes
import TSSocketIO

/// `POST /api/test/faults` and `GET /api/test/faults` (test mode, docs/test-mode.md "Faults"):
/// network faults on the sockets of one user or one Engine.IO session, so an app's offline and
/// reconnect paths can be tested against a real server. The faults themselves live in the
/// sessions (`EngineIOSession+Faults.swift`); nothing here outlives a socket.
extension TestRoutes {
    /// The `reason`s of `{"action":"disconnect"}`, as a client reports each (python-socketio's
    /// disconnect reasons; Engine.IO v4 / Socket.IO v5 protocol documents).
    static let disconnectReasons = TestModeLimits.disconnectReasons
    static let faultActions = TestModeLimits.faultActions
    static let maxFaultDelayMilliseconds = TestModeLimits.maxFaultDelayMilliseconds
    static let maxDropEvents = TestModeLimits.maxDropEvents
    static let maxDropCount = TestModeLimits.maxDropCount

    func registerFaults(into router: inout RouterBuilder) {
        let routes = self
        router.post("/api/test/faults", Authenticator.open { request in
            guard let body = try request.jsonBody().objectValue else { throw DomainError.validation(field: "body", message: "must be a JSON object") }
            return Reply.data(try routes.applyFault(body))
        })
        router.get("/api/test/faults", Authenticator.open { _ in
            Reply.data(.object(["faults": .array(routes.activeFaults())]))
        })
    }

    /// The sessions `body` targets: `userId` (every socket of that user) or `sid` (one
    /// Engine.IO session). Neither is allowed only for `clear` (every session).
    private func targetSessions(_ body: JSONObject, optional: Bool) throws -> [EngineIOSession]? {
        let userId = body["userId"]
        let sid = body["sid"]
        if userId != nil && sid != nil { throw DomainError.validation(field: "sid", message: "give userId or sid, not both") }
        if let userId {
            guard let id = userId.stringValue, !id.isEmpty else { throw DomainError.validation(field: "userId", message: "must be a non-empty string") }
            let sessions = hub.engineSessions(ofUser: id)
            guard !sessions.isEmpty else { throw DomainError.notFound("Socket of user \(id)") }
            return sessions
        }
        if let sid {
            guard let id = sid.stringValue, !id.isEmpty else { throw DomainError.validation(field: "sid", message: "must be a non-empty string") }
            guard let session = hub.engine.session(id: id), !hub.sockets(onEngineSession: id).isEmpty else {
                throw DomainError.notFound("Socket on Engine.IO session \(id)")
            }
            return [session]
        }
        if optional { return nil }
        throw DomainError.validation(field: "userId", message: "is required (or sid): the user or Engine.IO session whose sockets the fault acts on")
    }

    private func applyFault(_ body: JSONObject) throws -> JSONValue {
        guard let action = body["action"]?.stringValue, Self.faultActions.contains(action) else {
            throw DomainError.validation(field: "action", message: "must be one of \(Self.faultActions.joined(separator: ", "))")
        }
        // Every field is checked before the target is looked up: a malformed request is a 400
        // whether or not the target has sockets.
        var fault: EngineFault?
        var reason: String?
        switch action {
        case "disconnect":
            guard let r = body["reason"]?.stringValue, Self.disconnectReasons.contains(r) else {
                throw DomainError.validation(field: "reason", message: "must be one of \(Self.disconnectReasons.joined(separator: ", "))")
            }
            reason = r
        case "delay":
            guard let ms = body["milliseconds"]?.intValue, (0...Int64(Self.maxFaultDelayMilliseconds)).contains(ms) else {
                throw DomainError.validation(field: "milliseconds", message: "must be an integer from 0 to \(Self.maxFaultDelayMilliseconds)")
            }
            fault = .delay(milliseconds: Int(ms))
        case "drop":
            guard let list = body["events"]?.arrayValue, !list.isEmpty, list.count <= Self.maxDropEvents else {
                throw DomainError.validation(field: "events", message: "must be an array of 1 to \(Self.maxDropEvents) event names")
            }
            var names = Set<String>()
            for (i, v) in list.enumerated() {
                guard let name = v.stringValue, !name.isEmpty else { throw DomainError.validation(field: "events[\(i)]", message: "must be a non-empty string") }
                names.insert(name)
            }
            var count: Int64 = 1
            if let raw = body["count"] {
                guard let c = raw.intValue, (1...Int64(Self.maxDropCount)).contains(c) else {
                    throw DomainError.validation(field: "count", message: "must be an integer from 1 to \(Self.maxDropCount)")
                }
                count = c
            }
            fault = .drop(events: names, count: Int(count))
        case "hold": fault = .hold
        case "release": fault = .release
        default: break  // clear
        }
        let targeted = try targetSessions(body, optional: action == "clear")
        let sessions = targeted ?? hub.engine.allSessions.filter { $0.faultSnapshot != nil }
        let log = eventLog
        var affected: [String] = []
        for session in sessions {
            let ok: Bool
            switch (action, reason) {
            case ("disconnect", "transport close"): ok = session.dropTransport(reset: false)
            case ("disconnect", "transport error"): ok = session.dropTransport(reset: true)
            case ("disconnect", "ping timeout"): ok = session.silenceUntilPingTimeout()
            case ("disconnect", _):
                ok = !session.isClosed
                hub.kick(session)
            case ("clear", _):
                ok = true
                session.clearFaults()
            default:
                let sid = session.id
                ok = session.applyFault(fault!, maxBufferedBytes: faultMaxBufferedBytes) { name in log.noteDropped(event: name, sid: sid) }
            }
            if ok { affected.append(session.id) }
        }
        let what = reason.map { "disconnect (\($0))" } ?? action
        logger.info("test fault: \(what) on \(affected.count) session(s) [\(affected.joined(separator: ", "))]")
        return .object(["action": .string(action), "reason": .optional(reason), "sessions": .array(affected.map { .string($0) })])
    }

    /// Every session with an active fault, with its user and sockets.
    private func activeFaults() -> [JSONValue] {
        hub.engine.allSessions.compactMap { session -> JSONValue? in
            guard let f = session.faultSnapshot else { return nil }
            let sockets = hub.sockets(onEngineSession: session.id)
            return .object([
                "sid": .string(f.sid), "userId": .optional(sockets.lazy.compactMap(\.userID).first),
                "socketIds": .array(sockets.map { .string($0.id) }),
                "delayMilliseconds": .int(Int64(f.delayMilliseconds)), "holding": .bool(f.holding),
                "dropEvents": .array(f.dropEvents.map { .string($0) }), "dropRemaining": .int(Int64(f.dropRemaining)),
                "silenced": .bool(f.silenced), "queuedPackets": .int(Int64(f.queuedPackets)), "queuedBytes": .int(Int64(f.queuedBytes)),
            ])
        }.sorted { ($0["sid"]?.stringValue ?? "") < ($1["sid"]?.stringValue ?? "") }
    }
}
