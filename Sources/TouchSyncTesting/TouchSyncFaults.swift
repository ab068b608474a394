import Foundation

/// Whose realtime connections a fault applies to.
public enum FaultTarget: Sendable, Hashable {
    /// Every socket of a user.
    case user(String)
    /// One Engine.IO session (its `sid`).
    case session(String)
}

/// How `TouchSyncFaults.disconnect` cuts a connection: each is what a client reports as its
/// disconnect reason.
public enum DisconnectReason: String, Sendable, Codable, CaseIterable {
    /// The transport closes cleanly (FIN).
    case transportClose = "transport close"
    /// The transport breaks (RST).
    case transportError = "transport error"
    /// The server falls silent until the client's ping timeout.
    case pingTimeout = "ping timeout"
    /// A Socket.IO DISCONNECT from the server.
    case serverDisconnect = "server disconnect"
}

/// What a fault call did (`POST /api/test/faults`).
public struct FaultResult: Codable, Sendable, Hashable {
    /// `disconnect`, `delay`, `drop`, `hold`, `release` or `clear`.
    public let action: String
    /// The disconnect reason (nil for other actions).
    public let reason: String?
    /// The Engine.IO sessions it acted on.
    public let sessions: [String]
}

/// A session with an active fault (`GET /api/test/faults`).
public struct ActiveFault: Codable, Sendable, Hashable {
    public let sid: String
    public let userId: String?
    public let socketIds: [String]
    public let delayMilliseconds: Int
    public let holding: Bool
    public let dropEvents: [String]
    public let dropRemaining: Int
    public let silenced: Bool
    public let queuedPackets: Int
    public let queuedBytes: Int
}

/// Network faults on connected sockets in test mode (`/api/test/faults`): make a user's sockets
/// disconnect, lag, lose events or hold them back, to test the app's offline and reconnect paths
/// against a real server. A target must have a connected socket (404 otherwise). On a server
/// without the route every call throws `TouchSyncError.api` with status 404.
public struct TouchSyncFaults: Sendable {
    let transport: HTTPTransport

    /// Cuts the target's connections the way `reason` describes.
    @discardableResult
    public func disconnect(_ target: FaultTarget, reason: DisconnectReason = .transportClose) async throws -> FaultResult {
        try await post("disconnect", target, ["reason": .string(reason.rawValue)])
    }

    /// Holds each packet to the target for `milliseconds` (0-60000) before it is sent.
    @discardableResult
    public func delay(_ target: FaultTarget, milliseconds: Int) async throws -> FaultResult {
        try await post("delay", target, ["milliseconds": .number(Double(milliseconds))])
    }

    /// Discards the next `count` emits (default 1) of the named events to the target.
    @discardableResult
    public func drop(_ target: FaultTarget, events: [String], count: Int? = nil) async throws -> FaultResult {
        var extra: [String: TouchSyncJSON] = ["events": .array(events.map { .string($0) })]
        if let count { extra["count"] = .number(Double(count)) }
        return try await post("drop", target, extra)
    }

    /// Keeps packets to the target back until `release`.
    @discardableResult
    public func hold(_ target: FaultTarget) async throws -> FaultResult { try await post("hold", target, [:]) }

    /// Sends what `hold` kept back, in order.
    @discardableResult
    public func release(_ target: FaultTarget) async throws -> FaultResult { try await post("release", target, [:]) }

    /// Removes the target's faults, or every session's when `target` is nil.
    @discardableResult
    public func clear(_ target: FaultTarget? = nil) async throws -> FaultResult { try await post("clear", target, [:]) }

    /// The sessions with an active fault.
    public func active() async throws -> [ActiveFault] {
        try await transport.send(.get, "/api/test/faults").decodeData(ActiveFaults.self, route: "GET /api/test/faults").faults
    }

    private func post(_ action: String, _ target: FaultTarget?, _ extra: [String: TouchSyncJSON]) async throws -> FaultResult {
        var body = extra
        body["action"] = .string(action)
        switch target {
        case .user(let id): body["userId"] = .string(id)
        case .session(let sid): body["sid"] = .string(sid)
        case nil: break
        }
        return try await transport.send(.post, "/api/test/faults", body: try JSONEncoder().encode(TouchSyncJSON.object(body)))
            .decodeData(FaultResult.self, route: "POST /api/test/faults")
    }
}

struct ActiveFaults: Codable, Sendable {
    let faults: [ActiveFault]
}
