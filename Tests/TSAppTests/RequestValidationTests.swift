import Foundation
import TSHTTP
import TSJSON
@testable import TSRoutes
import XCTest

/// The request schemas of the OpenAPI document are the checks. Each case below
/// is one of the fuzzer's spec/behaviour mismatches, over real HTTP against a live server: a
/// clear JSON error naming the field, and the limit now in the served document.
final class RequestValidationTests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    /// `{"error": {"code": "VALIDATION_ERROR", "field": …}}`, or nil with a failure.
    func field(_ r: APIClient.Response, _ status: Int = 400, file: StaticString = #filePath, line: UInt = #line) -> String? {
        XCTAssertEqual(r.status, status, String(decoding: r.body, as: UTF8.self), file: file, line: line)
        XCTAssertEqual(r.json["error"]?["code"]?.stringValue, status == 400 ? "VALIDATION_ERROR" : r.json["error"]?["code"]?.stringValue,
                       file: file, line: line)
        return r.json["error"]?["field"]?.stringValue
    }

    func schema(_ document: JSONValue, _ name: String) -> JSONValue { document["components"]?["schemas"]?[name] ?? .null }

    func testSocketIdLongerThanDocumentedIsRefused() async throws {
        let a = try await api.register("alice")
        let room = try await api.post("/api/rooms", [:], token: a.token).json["data"]?["id"]?.stringValue ?? ""
        let body: JSONValue = ["type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4]
        let long = try await api.send("POST", "/api/rooms/\(room)/elements", json: body, headers: ["X-Socket-Id": String(repeating: "s", count: 65)],
                                      token: a.token)
        XCTAssertEqual(field(long), "X-Socket-Id")
        XCTAssertEqual(long.json["error"]?["message"]?.stringValue, "X-Socket-Id: must be at most 64 characters")
        let ok = try await api.send("POST", "/api/rooms/\(room)/elements", json: body, headers: ["X-Socket-Id": String(repeating: "s", count: 64)],
                                    token: a.token)
        XCTAssertEqual(ok.status, 201)
        let doc = try await api.get("/openapi.json").json
        let params = doc["paths"]?["/api/rooms/{roomId}/elements"]?["post"]?["parameters"]?.arrayValue ?? []
        XCTAssertEqual(params.first { $0["name"] == "X-Socket-Id" }?["schema"]?["maxLength"], 64)
    }

    func testUnknownBodyFieldIsRefused() async throws {
        let a = try await api.register("alice")
        let r = try await api.post("/api/rooms", ["name": "Trip", "colour": "red"], token: a.token)
        XCTAssertEqual(field(r), "colour")
        XCTAssertTrue(r.json["error"]?["message"]?.stringValue?.contains("not a known field") ?? false, "\(r.json)")
        let reg = try await api.post("/api/auth/register", ["username": "bob", "password": "password-123", "admin": true])
        XCTAssertEqual(field(reg), "admin")
    }

    func testEmptyIntegerQueryValuesAreRefused() async throws {
        let a = try await api.register("alice")
        for path in ["/inspector/api/rooms?limit=", "/inspector/api/events?since=", "/api/test/events?limit=", "/api/notifications?limit="] {
            let r = try await api.get(path, token: a.token)
            XCTAssertEqual(r.status, 400, path)
            XCTAssertEqual(r.json["error"]?["message"]?.stringValue?.hasSuffix("must be an integer"), true, "\(path): \(r.json)")
        }
        for path in ["/inspector/api/rooms?limit=+5", "/inspector/api/rooms?limit=1.5", "/api/notifications?limit=%205", "/api/test/events?since=-1"] {
            let r = try await api.get(path, token: a.token)
            XCTAssertEqual(r.status, 400, path)
        }
        let ok = try await api.get("/inspector/api/rooms?limit=5")
        XCTAssertEqual(ok.status, 200)
    }

    func testUndocumentedLimitsAreNowDocumentedAndEnforced() async throws {
        let a = try await api.register("alice")
        let room = try await api.post("/api/rooms", [:], token: a.token).json["data"]?["id"]?.stringValue ?? ""
        // Positions within ±1e6.
        let far = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 1_000_001, "positionY": 0, "width": 1, "height": 1],
                                     token: a.token)
        XCTAssertEqual(field(far), "positionX")
        let edge = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": -1_000_000, "positionY": 1_000_000, "width": 1, "height": 1],
                                      token: a.token)
        XCTAssertEqual(edge.status, 201)
        // Empty username / token / content.
        let login = try await api.post("/api/auth/login", ["username": "", "password": "x"])
        XCTAssertEqual(field(login), "username")
        let device = try await api.post("/api/devices", ["token": "", "platform": "ios"], token: a.token)
        XCTAssertEqual(field(device), "token")
        let post = try await api.post("/api/mobile/posts", ["content": ""], token: a.token)
        XCTAssertEqual(post.status, 400)
        XCTAssertEqual(post.json["success"], false, "mobile routes keep the mobile envelope")
        XCTAssertEqual(post.json["field"]?.stringValue, "content")
        // Members need userId or username.
        let noMember = try await api.post("/api/rooms/\(room)/members", [:], token: a.token)
        XCTAssertEqual(field(noMember), "userId")
        let badId = try await api.post("/api/rooms/\(room)/members", ["userId": "not-a-uuid"], token: a.token)
        XCTAssertEqual(field(badId), "userId")
        // `before` that is not an item of the list: 404, documented.
        let page = try await api.get("/api/rooms/\(room)/messages?before=00000000-0000-4000-8000-000000000000", token: a.token)
        XCTAssertEqual(page.status, 404)
        XCTAssertEqual(page.json["error"]?["code"], "NOT_FOUND")
        // A blank room name.
        let blank = try await api.patch("/api/rooms/\(room)", ["name": " \t "], token: a.token)
        XCTAssertEqual(field(blank), "name")

        let doc = try await api.get("/openapi.json").json
        let element = schema(doc, "CreateElementRequest")
        XCTAssertEqual(element["properties"]?["positionX"]?["maximum"], 1_000_000)
        XCTAssertEqual(element["properties"]?["positionX"]?["minimum"], -1_000_000)
        XCTAssertEqual(schema(doc, "LoginRequest")["properties"]?["username"]?["minLength"], 1)
        XCTAssertEqual(schema(doc, "RegisterDeviceRequest")["properties"]?["token"]?["minLength"], 1)
        XCTAssertEqual(schema(doc, "CreatePostRequest")["properties"]?["content"]?["minLength"], 1)
        XCTAssertEqual(schema(doc, "AddMemberRequest")["anyOf"]?.arrayValue?.count, 2)
        let socketParams = doc["paths"]?["/socket.io/"]?["get"]?["parameters"]?.arrayValue ?? []
        XCTAssertEqual(socketParams.first { $0["name"] == "EIO" }?["required"], true, "/socket.io/ without EIO is 400: EIO is required")
        let messages = doc["paths"]?["/api/rooms/{roomId}/messages"]?["get"]?["responses"]?["404"]
        XCTAssertNotNil(messages, "an unknown `before` is a documented 404")
    }

    func testOptionsOnMyRoomsListsOnlyItsOwnMethods() async throws {
        let a = try await api.register("alice")
        for method in ["OPTIONS", "PATCH"] {
            let r = try await api.send(method, "/api/rooms/my-rooms", token: a.token)
            XCTAssertEqual(r.status, 405, method)
            XCTAssertEqual(r.header("Allow"), "GET, HEAD", method)
        }
    }

    func testUnauthenticatedGets401BeforeAnyValidation() async throws {
        let r = try await api.post("/api/rooms", ["colour": "red"])
        XCTAssertEqual(r.status, 401)
        let bad = try await api.post("/api/rooms", ["colour": "red"], token: "not-a-token")
        XCTAssertEqual(bad.status, 401)
    }

    func testInvalidJSONAndWrongContentTypeAreClearJSONErrors() async throws {
        let a = try await api.register("alice")
        let broken = try await api.send("POST", "/api/rooms", rawBody: Data("{\"name\":".utf8), headers: ["Content-Type": "application/json"], token: a.token)
        XCTAssertEqual(broken.status, 400)
        XCTAssertEqual(broken.json["error"]?["code"], "VALIDATION_ERROR")
        let text = try await api.send("POST", "/api/rooms/x/messages", rawBody: Data("hi".utf8), headers: ["Content-Type": "text/plain"], token: a.token)
        XCTAssertEqual(text.status, 415)
        XCTAssertEqual(text.json["error"]?["code"], "UNSUPPORTED_MEDIA_TYPE")
        let array = try await api.post("/api/rooms/x/messages", ["text"], token: a.token)
        XCTAssertEqual(field(array), "body")
        XCTAssertEqual(array.json["error"]?["message"]?.stringValue, "body: must be an object")
    }

    /// Every keyword of every request schema and parameter is one the runtime check enforces (or
    /// an annotation), so nothing is documented that is not checked.
    func testEveryRequestSchemaKeywordIsEnforced() throws {
        let components = RequestValidation.components
        var seen: Set<String> = []
        var unsupported: [String] = []
        func walk(_ v: JSONValue, _ path: String) {
            if let o = v.objectValue {
                for (k, child) in o {
                    if k == "properties" || k == "patternProperties" {
                        for (name, p) in child.objectValue ?? JSONObject() { walk(p, "\(path).\(name)") }
                        continue
                    }
                    if !JSONSchemaCheck.keywords.contains(k) { unsupported.append("\(path): \(k)") }
                    if k == "$ref", let ref = child.stringValue, !seen.contains(ref) {
                        seen.insert(ref)
                        walk(components[String(ref.split(separator: "/").last ?? "")] ?? .null, ref)
                    }
                    walk(child, "\(path).\(k)")
                }
            } else if let a = v.arrayValue {
                for (i, x) in a.enumerated() { walk(x, "\(path)[\(i)]") }
            }
        }
        for op in OpenAPICatalog.operations where op.envelope != .none {
            if let body = op.requestSchema { walk(body, "\(op.method) \(op.pattern) body") }
            for p in op.parameters { walk(p.schema, "\(op.method) \(op.pattern) \(p.name)") }
        }
        XCTAssertEqual(unsupported, [])
        XCTAssertGreaterThan(seen.count, 10)
    }

    func testSchemaCheckKeywords() {
        let c = JSONSchemaCheck(components: ["Id": ["type": "string", "format": "uuid"]])
        XCTAssertNil(c.violation("a", against: ["type": "string", "pattern": "\\S"], at: "x"))
        XCTAssertEqual(c.violation(" \n", against: ["type": "string", "pattern": "\\S", "x-patternMessage": "must not be blank"], at: "x")?.message,
                       "must not be blank")
        XCTAssertNil(c.violation("ab_c.9", against: ["type": "string", "pattern": "^[a-z0-9_.]{3,32}$"], at: "u"))
        XCTAssertNotNil(c.violation("abc\n", against: ["type": "string", "pattern": "^[a-z0-9_.]{3,32}$"], at: "u"), "$ is the end of the input")
        XCTAssertNotNil(c.violation("Abc", against: ["type": "string", "pattern": "^[a-z0-9_.]{3,32}$"], at: "u"))
        XCTAssertEqual(c.violation("ééé", against: ["type": "string", "maxLength": 3], at: "s"), nil, "code points, not bytes")
        XCTAssertNotNil(c.violation("éééé", against: ["type": "string", "maxLength": 3], at: "s"))
        XCTAssertNil(c.violation(1.0, against: ["type": "integer"], at: "i"))
        XCTAssertNotNil(c.violation(1.5, against: ["type": "integer"], at: "i"))
        XCTAssertNotNil(c.violation("x", against: ["$ref": "#/components/schemas/Id"], at: "id"))
        XCTAssertNil(c.violation("0b9d2a4e-1c2f-4a57-9a8b-3f0e6d7c5b41", against: ["$ref": "#/components/schemas/Id"], at: "id"))
        XCTAssertEqual(c.violation(["a": 1], against: ["type": "object", "properties": ["b": ["type": "integer"]], "additionalProperties": false], at: "body"),
                       JSONSchemaCheck.Violation(field: "a", message: "is not a known field"))
        XCTAssertEqual(c.violation(["xs": [1, "2"]], against: ["type": "object", "properties": ["xs": ["type": "array", "items": ["type": "integer"]]]], at: "body"),
                       JSONSchemaCheck.Violation(field: "xs[1]", message: "must be an integer"))
        XCTAssertNotNil(c.violation([:], against: ["anyOf": [["required": ["a"]], ["required": ["b"]]]], at: "body"))
        XCTAssertNil(c.violation(["b": 1], against: ["anyOf": [["required": ["a"]], ["required": ["b"]]]], at: "body"))
        let target: JSONValue = ["oneOf": [["required": ["a"], "properties": ["b": false]], ["required": ["b"], "properties": ["a": false]]]]
        XCTAssertNil(c.violation(["a": 1], against: target, at: "body"))
        XCTAssertEqual(c.violation([:], against: target, at: "body")?.field, "a", "no form: the first form's field")
        XCTAssertEqual(c.violation(["a": 1, "b": 2], against: target, at: "body")?.field, "b", "both: the first form forbids b")
        let dependent: JSONValue = ["if": ["properties": ["kind": ["const": "drop"]], "required": ["kind"]], "then": ["required": ["events"]]]
        XCTAssertEqual(c.violation(["kind": "drop"], against: dependent, at: "body"), JSONSchemaCheck.Violation(field: "events", message: "is required"))
        XCTAssertNil(c.violation(["kind": "hold"], against: dependent, at: "body"))
        XCTAssertNil(c.violation([:], against: dependent, at: "body"), "if fails without the discriminator")
        XCTAssertNotNil(c.violation(.null, against: ["enum": ["a", "b"]], at: "e"))
        XCTAssertNil(c.violation(.null, against: ["type": ["string", "null"], "enum": ["a", .null]], at: "e"))
        let comments: JSONValue = ["type": "object", "properties": ["a": ["type": "integer"]], "patternProperties": ["^_": [:]], "additionalProperties": false]
        XCTAssertNil(c.violation(["a": 1, "_comment": "x"], against: comments, at: "body"))
        XCTAssertEqual(c.violation(["b": 1], against: comments, at: "body")?.field, "b")
        XCTAssertEqual(RequestValidation.parseInteger("-12"), -12)
        XCTAssertNil(RequestValidation.parseInteger(""))
        XCTAssertNil(RequestValidation.parseInteger("+1"))
        XCTAssertNil(RequestValidation.parseInteger("99999999999999999999"))
    }

    /// The one request schema that is "an object of one array of strings" gets a
    /// fast reader whose bounds come from that schema (interaction-state: `postIds`, 1…50); no
    /// other route does.
    func testFastBodyReadersComeFromTheSchema() {
        XCTAssertEqual(Array(RequestValidation.fastBodies.keys), ["/api/mobile/posts/interaction-state"])
        let fast = RequestValidation.fastBodies["/api/mobile/posts/interaction-state"]
        XCTAssertEqual(fast?.member, "postIds")
        XCTAssertEqual(fast?.count, 1...50)
        XCTAssertEqual(fast?.method, .POST)
        // Any other keyword on the array or its items: no fast reader (the full check decides).
        let constrained: JSONValue = ["type": "object", "additionalProperties": false,
                                      "properties": ["ids": ["type": "array", "items": ["type": "string", "minLength": 1], "maxItems": 5]]]
        XCTAssertNil(FastArrayBody(schema: constrained, components: JSONObject()))
        let open: JSONValue = ["type": "object", "properties": ["ids": ["type": "array", "items": ["type": "string"], "maxItems": 5]]]
        XCTAssertNil(FastArrayBody(schema: open, components: JSONObject()))
    }
}
