import Foundation
import TSHTTP
import TSJSON
import TSRoutes
import XCTest

/// `GET /openapi.json`: generated from the route table so it cannot drift, a
/// valid OpenAPI 3.1 document, and every route's live response conforms to its schema.
final class OpenAPITests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!
    var document: JSONValue = .null
    var validator: JSONSchemaValidator { JSONSchemaValidator(document: document) }
    var covered: Set<String> = []

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true])
        api = APIClient(base: live.base)
        let r = try await api.get("/openapi.json")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/json")
        document = r.json
    }

    override func tearDown() async throws { await live.stop() }

    func testEveryRegisteredRouteIsDocumentedAndEveryDocumentedRouteIsRegistered() throws {
        let routes = live.server.registeredRoutes
        XCTAssertGreaterThan(routes.count, 30)
        XCTAssertEqual(OpenAPIDocument.undocumented(routes), [], "routes registered but missing from OpenAPICatalog")
        XCTAssertEqual(OpenAPIDocument.unregistered(routes), [], "OpenAPICatalog entries whose route is not registered")

        // The served document has exactly the registered routes.
        var served: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? JSONObject() {
            for (method, _) in item.objectValue ?? JSONObject() { served.insert("\(method.uppercased()) \(path)") }
        }
        let registered = Set(routes.map { "\($0.method) \(OpenAPIOperation.openAPIPath($0.pattern))" })
        XCTAssertEqual(served, registered)
        XCTAssertEqual(document["openapi"], "3.1.0")

        // The drift check can fail: a route added without documentation is reported.
        let extra = routes + [(method: HTTPMethod.GET, pattern: "/api/undocumented")]
        XCTAssertEqual(OpenAPIDocument.undocumented(extra), ["GET /api/undocumented"])
    }

    /// The catalog's `security` and the route's authentication step agree: every operation the
    /// catalog says needs a token answers 401 without one, before any check of its input (a body
    /// that breaks its schema too), in its route family's envelope.
    func testEveryRouteDeclaredWithABearerTokenAnswers401WithoutOne() async throws {
        let bearer = OpenAPICatalog.operations.filter { $0.security == .bearer && $0.pattern.hasPrefix("/api/") && !$0.pattern.hasPrefix("/api/test") }
        XCTAssertGreaterThan(bearer.count, 20)
        for op in bearer {
            let path = op.pattern.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "x" : String($0) }.joined(separator: "/")
            // URLSession sends no body with a GET.
            for body: JSONValue? in op.method == .GET ? [nil] : [nil, .array([.int(1)])] {
                let r = try await api.send("\(op.method)", path, json: body)
                XCTAssertEqual(r.status, 401, "\(op.method) \(op.pattern) body \(String(describing: body))")
                let code = op.pattern.hasPrefix("/api/mobile/") ? r.json["code"] : r.json["error"]?["code"]
                XCTAssertEqual(code, "UNAUTHORIZED", "\(op.method) \(op.pattern): \(String(decoding: r.body, as: UTF8.self))")
            }
        }
    }

    func testTestRoutesAreDocumentedOnlyWhenRegistered() async throws {
        let plain = try LiveServer()
        let r = try await APIClient(base: plain.base).get("/openapi.json")
        let paths = r.json["paths"]?.objectValue?.keys ?? []
        XCTAssertFalse(paths.contains { $0.hasPrefix("/api/test/") })
        XCTAssertTrue(paths.contains("/api/rooms/{roomId}/elements/{elementId}/reactions/toggle"))
        XCTAssertEqual(OpenAPIDocument.undocumented(plain.server.registeredRoutes), [])
        await plain.stop()
    }

    /// The whole document through `openapi-spec-validator` (pip), when it is installed.
    func testDocumentPassesOpenAPISpecValidator() throws {
        // python3 as found on PATH (a pyenv or venv one included).
        let python = "/usr/bin/env"
        let probe = try run(python, ["python3", "-c", "import openapi_spec_validator"])
        guard probe.status == 0 else {
            // scripts/test installs it into .venv and requires it; elsewhere the check is optional.
            if ProcessInfo.processInfo.environment["TOUCHSYNC_REQUIRE_OPENAPI_VALIDATOR"] == "1" {
                XCTFail("openapi-spec-validator is required (scripts/test installs it into .venv) but python3 cannot import it")
                return
            }
            throw XCTSkip("openapi-spec-validator is not installed (pip install openapi-spec-validator)")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("touchsync-openapi-\(UUID().uuidString).json")
        try Data(document.serialized()).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try run(python, ["python3", "-c", "import json,sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(open(sys.argv[1])))\nprint('valid')",
                                      file.path])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("valid"), result.output)
    }

    func run(_ executable: String, _ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self))
    }

    func testValidatorRejectsNonConformingValues() {
        let v = validator
        XCTAssertEqual(v.validate(["id": "x", "username": "a", "firstName": .null, "avatarUrl": .null], against: ["$ref": "#/components/schemas/User"]), [])
        XCTAssertFalse(v.validate(["id": "x", "username": "a", "firstName": .null], against: ["$ref": "#/components/schemas/User"]).isEmpty,
                       "a missing field (instead of null) is a violation")
        XCTAssertFalse(v.validate(["id": "x", "username": "a", "firstName": .null, "avatarUrl": .null, "extra": 1],
                                  against: ["$ref": "#/components/schemas/User"]).isEmpty)
        XCTAssertFalse(v.validate("2024-01-15T10:00:00.123Z", against: ["$ref": "#/components/schemas/Message/properties/createdAt"]).isEmpty,
                       "fractional seconds are refused")
    }

    // MARK: live responses against their schemas

    /// Validates `r` against the documented response of `method pattern` for its status.
    func check(_ r: APIClient.Response, _ method: String, _ pattern: String, file: StaticString = #filePath, line: UInt = #line) {
        covered.insert("\(method) \(pattern)")
        guard let op = document["paths"]?[OpenAPIOperation.openAPIPath(pattern)]?[method.lowercased()] else {
            return XCTFail("\(method) \(pattern) is not in the document", file: file, line: line)
        }
        guard let response = op["responses"]?[String(r.status)] ?? op["responses"]?["default"] else {
            return XCTFail("\(method) \(pattern) answered \(r.status), which is not documented", file: file, line: line)
        }
        guard let (contentType, media) = response["content"]?.objectValue?.pairs.first.map({ ($0.key, $0.value) }) else { return }
        if contentType == "application/json" {
            let errors = validator.validate(r.json, against: media["schema"] ?? .null)
            XCTAssertEqual(errors, [], "\(method) \(pattern) \(r.status): \(String(decoding: r.body.prefix(600), as: UTF8.self))", file: file, line: line)
        } else {
            XCTAssertEqual(r.header("Content-Type"), contentType, file: file, line: line)
        }
    }

    func testEveryRouteAnswersAsDocumented() async throws {
        // Test mode, operations
        check(try await api.post("/api/test/reset"), "POST", "/api/test/reset")
        let fx = try await api.post("/api/test/fixtures", try TestModeTests.exampleFixtures())
        check(fx, "POST", "/api/test/fixtures")
        let fixtures = fx.json["data"] ?? .null
        check(try await api.post("/api/test/fixtures", ["users": [["username": "x"]]]), "POST", "/api/test/fixtures")  // 400
        check(try await api.post("/api/test/faults", ["action": "clear"]), "POST", "/api/test/faults")
        check(try await api.post("/api/test/faults", ["action": "hold", "userId": "nobody"]), "POST", "/api/test/faults")  // 404
        check(try await api.post("/api/test/faults", ["action": "nap"]), "POST", "/api/test/faults")  // 400
        check(try await api.get("/api/test/faults"), "GET", "/api/test/faults")
        check(try await api.post("/api/test/limits", ["enabled": false]), "POST", "/api/test/limits")
        check(try await api.post("/api/test/limits", ["enabled": 1]), "POST", "/api/test/limits")  // 400
        check(try await api.post("/api/test/clock", ["advance": "1h"]), "POST", "/api/test/clock")
        check(try await api.post("/api/test/clock", ["advance": "1y"]), "POST", "/api/test/clock")  // 400
        check(try await api.post("/api/test/clock", ["reset": true]), "POST", "/api/test/clock")
        check(try await api.get("/api/test/clock"), "GET", "/api/test/clock")
        check(try await api.get("/health"), "GET", "/health")
        check(try await api.get("/metrics"), "GET", "/metrics")
        check(try await api.get("/openapi.json"), "GET", "/openapi.json")

        // Auth
        let reg = try await api.post("/api/auth/register", ["username": "dave", "password": "dave-password", "firstName": "Dave"])
        check(reg, "POST", "/api/auth/register")
        check(try await api.post("/api/auth/register", ["username": "dave", "password": "dave-password"]), "POST", "/api/auth/register")  // 409
        let dave = try XCTUnwrap(reg.json["data"]?["token"]?.stringValue)
        let daveId = try XCTUnwrap(reg.json["data"]?["user"]?["id"]?.stringValue)
        check(try await api.post("/api/auth/login", ["username": "dave", "password": "dave-password"]), "POST", "/api/auth/login")
        check(try await api.post("/api/auth/login", ["username": "dave", "password": "wrong-password"]), "POST", "/api/auth/login")  // 401
        check(try await api.get("/api/auth/me", token: dave), "GET", "/api/auth/me")
        check(try await api.get("/api/auth/me"), "GET", "/api/auth/me")  // 401

        let alice = try XCTUnwrap(fixtures["users"]?["alice"]?["token"]?.stringValue)
        let bob = try XCTUnwrap(fixtures["users"]?["bob"]?["token"]?.stringValue)
        let design = try XCTUnwrap(fixtures["rooms"]?["design"]?.stringValue)
        let kickoff = try XCTUnwrap(fixtures["elements"]?["kickoff"]?.stringValue)
        let launch = try XCTUnwrap(fixtures["posts"]?["launch"]?.stringValue)

        // Rooms
        let created = try await api.post("/api/rooms", ["memberIds": [.string(daveId)]], token: alice)
        check(created, "POST", "/api/rooms")
        let room = try XCTUnwrap(created.json["data"]?["id"]?.stringValue)
        check(try await api.get("/api/rooms/my-rooms", token: bob), "GET", "/api/rooms/my-rooms")
        check(try await api.get("/api/rooms/\(design)", token: alice), "GET", "/api/rooms/:roomId")
        check(try await api.get("/api/rooms/\(room)", token: bob), "GET", "/api/rooms/:roomId")  // 403
        check(try await api.get("/api/rooms/no-such-room", token: bob), "GET", "/api/rooms/:roomId")  // 404
        check(try await api.patch("/api/rooms/\(room)", ["name": "Renamed"], token: alice), "PATCH", "/api/rooms/:roomId")
        check(try await api.patch("/api/rooms/\(room)", ["name": 5], token: alice), "PATCH", "/api/rooms/:roomId")  // 400
        check(try await api.post("/api/rooms/\(room)/members", ["username": "bob"], token: alice), "POST", "/api/rooms/:roomId/members")
        check(try await api.post("/api/rooms/\(room)/seen", token: bob), "POST", "/api/rooms/:roomId/seen")

        // Elements
        let element = try await api.post("/api/rooms/\(room)/elements", ["type": "photo", "positionX": 1, "positionY": 2.5, "width": 100, "height": 80,
                                                                         "imageUrl": "https://example.com/p.jpg", "duration": .null], token: alice)
        check(element, "POST", "/api/rooms/:roomId/elements")
        check(try await api.post("/api/rooms/\(room)/elements", ["type": "sticker", "positionX": 1, "positionY": 2, "width": 1, "height": 1], token: alice),
              "POST", "/api/rooms/:roomId/elements")  // 400
        let elementId = try XCTUnwrap(element.json["data"]?["id"]?.stringValue)
        check(try await api.get("/api/rooms/\(design)/elements", token: bob), "GET", "/api/rooms/:roomId/elements")
        check(try await api.patch("/api/rooms/\(room)/elements/\(elementId)", ["positionX": 50, "content": "moved"], token: bob),
              "PATCH", "/api/rooms/:roomId/elements/:elementId")
        check(try await api.post("/api/rooms/\(room)/elements/\(elementId)/reactions/toggle", token: bob),
              "POST", "/api/rooms/:roomId/elements/:elementId/reactions/toggle")
        check(try await api.post("/api/rooms/\(design)/elements/\(kickoff)/reactions/toggle", token: bob),
              "POST", "/api/rooms/:roomId/elements/:elementId/reactions/toggle")  // removed
        check(try await api.get("/api/rooms/\(design)/elements/\(kickoff)/reactions?limit=1", token: alice),
              "GET", "/api/rooms/:roomId/elements/:elementId/reactions")
        check(try await api.get("/api/rooms/\(design)/elements/\(kickoff)/reactions?limit=0", token: alice),
              "GET", "/api/rooms/:roomId/elements/:elementId/reactions")  // 400
        check(try await api.get("/api/rooms/\(room)/elements", token: dave), "GET", "/api/rooms/:roomId/elements")  // elements with reactions
        check(try await api.delete("/api/rooms/\(room)/elements/\(elementId)", token: alice), "DELETE", "/api/rooms/:roomId/elements/:elementId")
        check(try await api.delete("/api/rooms/\(room)/elements/\(elementId)", token: alice), "DELETE", "/api/rooms/:roomId/elements/:elementId")  // 404
        check(try await api.delete("/api/rooms/\(design)/elements", token: alice), "DELETE", "/api/rooms/:roomId/elements")

        // Messages
        check(try await api.post("/api/rooms/\(room)/messages", ["text": "hello"], token: dave), "POST", "/api/rooms/:roomId/messages")
        check(try await api.get("/api/rooms/\(room)/messages?limit=10", token: alice), "GET", "/api/rooms/:roomId/messages")
        check(try await api.post("/api/rooms/\(room)/messages/read", token: alice), "POST", "/api/rooms/:roomId/messages/read")
        check(try await api.delete("/api/rooms/\(room)/members/me", token: dave), "DELETE", "/api/rooms/:roomId/members/me")

        // Posts (mobile envelope)
        let post = try await api.post("/api/mobile/posts", ["content": "Hello feed"], token: dave)
        check(post, "POST", "/api/mobile/posts")
        check(try await api.post("/api/mobile/posts", ["imageUrl": "x"], token: dave), "POST", "/api/mobile/posts")  // 400 mobile
        let postId = try XCTUnwrap(post.json["data"]?["id"]?.stringValue)
        check(try await api.post("/api/mobile/posts/\(postId)/like", token: alice), "POST", "/api/mobile/posts/:postId/like")
        check(try await api.delete("/api/mobile/posts/\(postId)/like", token: alice), "DELETE", "/api/mobile/posts/:postId/like")
        check(try await api.post("/api/mobile/posts/\(postId)/save", token: alice), "POST", "/api/mobile/posts/:postId/save")
        check(try await api.delete("/api/mobile/posts/\(postId)/save", token: alice), "DELETE", "/api/mobile/posts/:postId/save")
        check(try await api.post("/api/mobile/posts/no-such-post/like", token: alice), "POST", "/api/mobile/posts/:postId/like")  // 404 mobile
        check(try await api.post("/api/mobile/posts/interaction-state", ["postIds": [.string(launch), .string(postId), "unknown"]], token: bob),
              "POST", "/api/mobile/posts/interaction-state")
        check(try await api.post("/api/mobile/posts/interaction-state", ["postIds": []], token: bob), "POST", "/api/mobile/posts/interaction-state")

        // Devices and notifications
        check(try await api.post("/api/devices", ["token": "tok-1", "platform": "ios"], token: alice), "POST", "/api/devices")
        check(try await api.delete("/api/devices/tok-1", token: alice), "DELETE", "/api/devices/:token")
        check(try await api.get("/api/notifications", token: alice), "GET", "/api/notifications")

        check(try await api.get("/api/test/events?since=0&limit=50"), "GET", "/api/test/events")

        // Token refresh and logout: refresh, then logout revokes; both refused afterwards.
        let refreshed = try await api.post("/api/auth/refresh", token: dave)
        check(refreshed, "POST", "/api/auth/refresh")
        check(try await api.post("/api/auth/logout", token: dave), "POST", "/api/auth/logout")
        check(try await api.post("/api/auth/refresh", token: dave), "POST", "/api/auth/refresh")  // 401: revoked
        check(try await api.post("/api/auth/logout", token: dave), "POST", "/api/auth/logout")  // 401

        // Account export and deletion: a wrong password (401), then the deletion and its answer.
        let erin = try await api.post("/api/auth/register", ["username": "erin", "password": "erin-password"]).dataString("token")
        check(try await api.get("/api/auth/me/export", token: erin), "GET", "/api/auth/me/export")
        check(try await api.send("DELETE", "/api/auth/me", json: ["password": "wrong-password"], token: erin), "DELETE", "/api/auth/me")  // 401
        check(try await api.send("DELETE", "/api/auth/me", json: ["password": "erin-password"], token: erin), "DELETE", "/api/auth/me")

        // The inspector's data browser (dx; editable in test mode).
        let action = ["X-Inspector-Action": "1"]
        check(try await api.get("/inspector/api/browse/rooms?limit=2"), "GET", "/inspector/api/browse/:kind")
        check(try await api.get("/inspector/api/browse/widgets"), "GET", "/inspector/api/browse/:kind")  // 404: no such kind
        let note = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4],
                                      token: alice)
        let noteId = try XCTUnwrap(note.json["data"]?["id"]?.stringValue)
        let edited = try await api.send("PATCH", "/inspector/api/elements/\(noteId)", json: ["content": "edited"], headers: action)
        XCTAssertEqual(edited.status, 200, String(decoding: edited.body, as: UTF8.self))
        XCTAssertEqual(edited.json["content"], "edited")
        check(edited, "PATCH", "/inspector/api/elements/:elementId")
        check(try await api.send("PATCH", "/inspector/api/elements/\(noteId)", json: ["content": "edited"]),
              "PATCH", "/inspector/api/elements/:elementId")  // 403 without the header
        let removed = try await api.send("DELETE", "/inspector/api/rows/elements/\(noteId)", headers: action)
        XCTAssertEqual(removed.status, 200, String(decoding: removed.body, as: UTF8.self))
        check(removed, "DELETE", "/inspector/api/rows/:kind/:key")
        check(try await api.send("DELETE", "/inspector/api/rows/elements/\(noteId)", headers: action), "DELETE", "/inspector/api/rows/:kind/:key")  // 404
        check(try await api.send("POST", "/inspector/api/fixtures", json: try TestModeTests.exampleFixtures(), headers: action),
              "POST", "/inspector/api/fixtures")  // 409: alice exists
        check(try await api.send("POST", "/inspector/api/sockets/no-such-socket/disconnect", headers: action),
              "POST", "/inspector/api/sockets/:socketId/disconnect")  // 404
        check(try await api.send("POST", "/inspector/api/reset", headers: action), "POST", "/inspector/api/reset")

        // Parameterless GET routes added by other features (the inspector): their live answer too.
        for op in OpenAPICatalog.operations where op.method == .GET && op.pathParameters.isEmpty && !covered.contains("GET \(op.pattern)")
            && !op.pattern.hasPrefix("/socket.io") && live.server.registeredRoutes.contains(where: { $0.method == .GET && $0.pattern == op.pattern }) {
            check(try await api.get(op.pattern), "GET", op.pattern)
        }

        // Every documented JSON route was exercised (the Socket.IO transport is tested elsewhere).
        let documented = Set(OpenAPICatalog.operations.filter { !$0.pattern.hasPrefix("/socket.io") }.map { "\($0.method) \($0.pattern)" })
        XCTAssertEqual(documented.subtracting(covered), [], "routes not exercised against their schema")
    }
}
