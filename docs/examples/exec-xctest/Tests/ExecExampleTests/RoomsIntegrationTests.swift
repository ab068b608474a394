import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession outside Apple platforms
#endif

final class RoomsIntegrationTests: XCTestCase {
    let env = ProcessInfo.processInfo.environment
    lazy var base = URL(string: env["TOUCHSYNC_URL"]!)!
    /// The reload's answer: a reset gives every user a new token and every object a new id, so the
    /// tests take them from here, not from the TOUCHSYNC_TOKEN_*/TOUCHSYNC_ROOM_* exported before.
    var fixtures: [String: Any] = [:]

    override func setUp() async throws {
        // Each test starts from the fixtures: reset, then load them again (both take milliseconds).
        _ = try await post("/api/test/reset")
        let doc = try Data(contentsOf: URL(fileURLWithPath: env["FIXTURES_PATH"] ?? "config/fixtures/example.json"))
        let (status, answer) = try await post("/api/test/fixtures", body: doc)
        XCTAssertEqual(status, 201)
        fixtures = try XCTUnwrap(answer["data"] as? [String: Any])
    }

    func testHeartAppearsForBob() async throws {
        let users = fixtures["users"] as? [String: [String: Any]]
        let token = try XCTUnwrap(users?["bob"]?["token"] as? String)
        let room = try XCTUnwrap((fixtures["rooms"] as? [String: String])?["design"])
        let element = try XCTUnwrap((fixtures["elements"] as? [String: String])?["photo"])
        let (status, answer) = try await post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", token: token)
        XCTAssertEqual(status, 200)
        XCTAssertEqual((answer["data"] as? [String: Any])?["action"] as? String, "added")
        // … drive the app or the API, then assert on /api/test/events (docs/test-mode.md)
    }

    func post(_ path: String, body: Data? = nil, token: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: path, relativeTo: base)!)
        request.httpMethod = "POST"
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        // Test-mode changes carry this header (docs/test-mode.md, "Who may call the test routes").
        if path.hasPrefix("/api/test/") { request.setValue("1", forHTTPHeaderField: "X-TouchSync-Test") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }
}
