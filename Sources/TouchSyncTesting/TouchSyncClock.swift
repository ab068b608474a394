import Foundation

/// Test mode's movable clock (`/api/test/clock`): every time the server's domain reads (token
/// issue and expiry, `createdAt`, notification pruning, write-limit buckets) moves with it; the
/// Socket.IO heartbeats do not. `TouchSyncBackend.reset()` puts it back.
///
/// ```swift
/// try await backend.clock.advance(by: 31 * 86_400)   // every 30-day token has expired
/// ```
public struct TouchSyncClock: Sendable {
    let transport: HTTPTransport

    /// The server's domain time now, and how far it was moved.
    public func now() async throws -> TestClockState {
        try await transport.send(.get, "/api/test/clock").decodeData(TestClockState.self, route: "GET /api/test/clock")
    }

    /// Moves time forward by `seconds` (whole seconds; negative moves it back).
    @discardableResult
    public func advance(by seconds: TimeInterval) async throws -> TestClockState {
        try await move(["advance": "\(Int64(seconds.rounded()))s"])
    }

    /// Makes the server's "now" `date` (time keeps running from there).
    @discardableResult
    public func set(to date: Date) async throws -> TestClockState {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return try await move(["set": f.string(from: date)])
    }

    /// Back to the real clock.
    @discardableResult
    public func reset() async throws -> TestClockState {
        let body = try JSONEncoder().encode(["reset": true])
        return try await transport.send(.post, "/api/test/clock", body: body).decodeData(TestClockState.self, route: "POST /api/test/clock")
    }

    private func move(_ request: [String: String]) async throws -> TestClockState {
        let body = try JSONEncoder().encode(request)
        return try await transport.send(.post, "/api/test/clock", body: body).decodeData(TestClockState.self, route: "POST /api/test/clock")
    }
}

/// The answer of `GET/POST /api/test/clock` (schema `TestClock`).
public struct TestClockState: Codable, Sendable, Hashable {
    /// The server's domain time (ISO 8601 UTC, seconds).
    public let now: String
    public let nowMs: Int64
    /// How far the domain's clock is from the real one, in seconds (negative: in the past).
    public let offsetSeconds: Int64
    public let moved: Bool
}
