import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A TouchSync server in test mode (`touchsync serve --test-mode`, or the one `touchsync exec`
/// starts), driven from an app's XCTest target: reset it, load fixtures, call the REST API as any
/// user, await the realtime events it emits and inject transport faults.
///
/// ```swift
/// let backend = try await TouchSyncBackend.fromEnvironment()
/// try await backend.reset()
/// let world = try await backend.load(Fixtures().user("alice").user("bob")
///     .room("Design Team", createdBy: "alice", members: ["bob"]))
/// let alice = backend.client(as: world.user("alice"))
/// let rooms = try await alice.rooms.mine()
/// ```
///
/// Built from Foundation alone, so an iOS or macOS test target can depend on it without any part
/// of the server.
public struct TouchSyncBackend: Sendable {
    /// The server's base URL (REST and Socket.IO), e.g. `http://127.0.0.1:49321`.
    public let url: URL
    let transport: HTTPTransport

    /// The variables `fromEnvironment()` reads, in order: `touchsync exec` exports `TOUCHSYNC_URL`,
    /// and the same value as `TEST_RUNNER_TOUCHSYNC_URL`, which `xcodebuild` hands to the test
    /// process as `TOUCHSYNC_URL` (some runners pass the prefixed name through as it is).
    public static let environmentVariables = ["TOUCHSYNC_URL", "TEST_RUNNER_TOUCHSYNC_URL"]

    /// The variables holding the server's test-mode token (`testModeToken`), in order; needed when
    /// the server is not on this machine (a container, a CI service container).
    public static let tokenEnvironmentVariables = ["TOUCHSYNC_TEST_MODE_TOKEN", "TEST_RUNNER_TOUCHSYNC_TEST_MODE_TOKEN"]

    /// A backend at `url`. Nothing is sent until the first call; `fromEnvironment()` also checks
    /// that the server is in test mode. `testModeToken`: the server's `testModeToken`, sent as
    /// `X-TouchSync-Test` on the test-mode routes (nil: the server is on this machine and has none).
    public init(url: URL, testModeToken: String? = nil, session: URLSession = .shared) {
        self.url = url
        transport = HTTPTransport(base: url, session: session, testModeToken: testModeToken.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The backend named by `TOUCHSYNC_URL` (or `TEST_RUNNER_TOUCHSYNC_URL`), after checking that
    /// it answers and is in test mode.
    ///
    /// - Throws: `TouchSyncError.notConfigured` when neither variable is set (or is not a URL),
    ///   `TouchSyncError.unreachable` when nothing answers there, `TouchSyncError.notInTestMode`
    ///   when the server answers but its test routes are off.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment,
                                       session: URLSession = .shared) async throws -> TouchSyncBackend {
        guard let (name, raw) = environmentVariables.lazy.compactMap({ n in environment[n].map { (n, $0) } })
            .first(where: { !$0.1.isEmpty }) else {
            throw TouchSyncError.notConfigured(
                "neither TOUCHSYNC_URL nor TEST_RUNNER_TOUCHSYNC_URL is set: run the tests under `touchsync exec -- …`, "
                    + "or set TOUCHSYNC_URL to a server started with `touchsync serve --test-mode`")
        }
        guard let url = URL(string: raw), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw TouchSyncError.notConfigured("\(name) is \"\(raw)\", not an http:// or https:// URL")
        }
        let token = tokenEnvironmentVariables.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        let backend = TouchSyncBackend(url: url, testModeToken: token, session: session)
        try await backend.checkTestMode()
        return backend
    }

    /// Checks that the server answers and has its test routes on (a bounded read of the event log).
    public func checkTestMode() async throws {
        let response: HTTPTransport.Response
        do {
            response = try await transport.send(.get, "/api/test/events", query: [("since", String(Int64.max)), ("limit", "1")])
        } catch let error as TouchSyncError {
            throw error
        } catch {
            throw TouchSyncError.unreachable(url: url, underlying: String(describing: error))
        }
        if response.status == 404 {
            throw TouchSyncError.notInTestMode(url: url)
        }
        _ = try response.decodeData(RealtimeEventPage.self, route: "GET /api/test/events")
    }

    /// Empties every data table, disconnects every socket and clears the event log
    /// (`POST /api/test/reset`). Ids and tokens of earlier fixtures are gone afterwards.
    @discardableResult
    public func reset() async throws -> TestResetResult {
        try await transport.send(.post, "/api/test/reset").decodeData(TestResetResult.self, route: "POST /api/test/reset")
    }

    /// Turns the server's write limits on or off (`POST /api/test/limits`). In test mode they start
    /// off, and `reset()` turns them off again; turn them on to test the app's handling of 429
    /// `RATE_LIMITED` (every budget starts full). Answers whether they apply now.
    @discardableResult
    public func setWriteLimits(enabled: Bool) async throws -> TestLimitsState {
        let body = try JSONEncoder().encode(["enabled": enabled])
        return try await transport.send(.post, "/api/test/limits", body: body)
            .decodeData(TestLimitsState.self, route: "POST /api/test/limits")
    }

    /// Loads `fixtures` in one request (`POST /api/test/fixtures`), through the same services as
    /// the REST API, and answers each user's token and every object's id by name.
    public func load(_ fixtures: Fixtures) async throws -> LoadedFixtures {
        let body = try JSONEncoder().encode(fixtures.json)
        let result = try await transport.send(.post, "/api/test/fixtures", body: body)
            .decodeData(FixtureResult.self, route: "POST /api/test/fixtures")
        return LoadedFixtures(result: result)
    }

    /// A REST client that calls as the user holding `token`.
    public func client(token: String) -> TouchSyncClient { TouchSyncClient(transport: transport, token: token) }

    /// A REST client that calls as a user loaded from fixtures.
    public func client(as user: LoadedUser) -> TouchSyncClient { client(token: user.token) }

    /// Calls that need no token: register, log in, health.
    public var anonymous: TouchSyncClient { TouchSyncClient(transport: transport, token: nil) }

    /// The server's movable clock (`/api/test/clock`): test token expiry and anything that ages.
    public var clock: TouchSyncClock { TouchSyncClock(transport: transport) }

    /// Transport faults on connected sockets (`/api/test/faults`).
    public var faults: TouchSyncFaults { TouchSyncFaults(transport: transport) }

    /// `GET /openapi.json`: the server's own description of its REST routes, as JSON.
    public func openAPIDocument() async throws -> TouchSyncJSON {
        let response = try await transport.send(.get, "/openapi.json")
        try response.requireSuccess(route: "GET /openapi.json")
        return try response.decode(TouchSyncJSON.self, route: "GET /openapi.json")
    }

    /// The server's AsyncAPI 3.0.0 document of its Socket.IO events (`GET /asyncapi.json`).
    public func asyncAPIDocument() async throws -> TouchSyncJSON {
        let response = try await transport.send(.get, "/asyncapi.json")
        try response.requireSuccess(route: "GET /asyncapi.json")
        return try response.decode(TouchSyncJSON.self, route: "GET /asyncapi.json")
    }
}
