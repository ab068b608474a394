import Foundation
import TouchSyncTesting
import XCTest

/// The kit's models cannot drift from the server: every route of `/openapi.json` is called
/// through the kit on a fixture world (each answer decodes into its model), and each model's
/// fields are compared with its schema both ways: a property the schema lacks, a schema property
/// the model lacks, and optionality (a model optional exactly when the schema lets the field be
/// `null` or absent) all fail, naming the model, the field and the fix.
final class ModelDriftTests: LiveServerTestCase {
    /// Routes the kit does not wrap, with the reason.
    static let notWrapped: [String: String] = [
        "GET /metrics": "Prometheus text, not JSON",
        "GET /openapi.json": "read as JSON by TouchSyncBackend.openAPIDocument()",
        "GET /asyncapi.json": "read as JSON by TouchSyncBackend.asyncAPIDocument() (EventModelDriftTests)",
    ]
    /// The test-mode routes, wrapped by TouchSyncBackend and TouchSyncFaults.
    static let testModeRoutes = ["POST /api/test/reset", "POST /api/test/fixtures", "GET /api/test/events",
                                 "POST /api/test/faults", "GET /api/test/faults", "POST /api/test/limits",
                                 "GET /api/test/clock", "POST /api/test/clock"]

    func testEveryRouteOfTheDocumentIsWrapped() async throws {
        let backend = try await makeBackend()
        let doc = try await backend.openAPIDocument()
        var documented: Set<String> = []
        for (path, item) in doc["paths"]?.object ?? [:] where !path.hasPrefix("/socket.io") && !path.hasPrefix("/inspector") {
            for method in (item.object ?? [:]).keys where ["get", "post", "patch", "put", "delete"].contains(method) {
                documented.insert("\(method.uppercased()) \(Self.template(path))")
            }
        }
        XCTAssertFalse(documented.isEmpty, "no paths in /openapi.json")
        let wrapped = Set(TouchSyncClient.routes + Self.testModeRoutes + Self.notWrapped.keys)
        for route in documented.subtracting(wrapped).sorted() {
            XCTFail("\(route) is in /openapi.json but the kit has no call for it: add one (and its model) to TouchSyncClient")
        }
        for route in Set(TouchSyncClient.routes).subtracting(documented).sorted() {
            XCTFail("the kit calls \(route), which /openapi.json does not document: the route was renamed or removed")
        }
    }

    func testEveryAnswerDecodesAndEveryModelMatchesItsSchema() async throws {
        let backend = try await makeBackend()
        let document = try await backend.openAPIDocument()
        var schemas = try XCTUnwrap(document["components"]?["schemas"]?.object)
        // An inline object schema the kit models as a type of its own.
        schemas["AccountExport.user"] = schemas["AccountExport"]?["properties"]?["user"]
        let world = try await backend.load(Fixtures()
            .user("alice", firstName: "Alice").user("bob").user("carol")
            .room("Design Team", createdBy: "alice", members: ["bob"])
            .element("kickoff", in: "Design Team", by: "alice", type: .note, content: "Kick-off")
            .reaction(on: "kickoff", by: "bob")
            .post("launch", by: "alice", content: "We launched"))
        let alice = backend.client(as: world.user("alice")), bob = backend.client(as: world.user("bob"))
        let room = world.room("Design Team").id, kickoff = world.element("kickoff").id, launch = world.post("launch").id

        // Every call of the kit, each answer decoded into its model on the way.
        let health = try await backend.anonymous.health()
        let session = try await backend.anonymous.auth.register(username: "dave", password: "correct horse", firstName: "Dave")
        let login = try await backend.anonymous.auth.login(username: "alice", password: Fixtures.defaultPassword)
        let me = try await alice.auth.me()
        let refreshed = try await alice.auth.refresh()
        let created = try await alice.rooms.create(name: "Second", memberIds: [world.user("carol").id])
        let mine = try await alice.rooms.mine()
        let renamed = try await alice.rooms.rename(created.id, to: "Renamed")
        let added = try await alice.rooms.addMember(created.id, username: "bob")
        let left = try await bob.rooms.leave(created.id)
        let element = try await alice.elements.create(in: room, type: .photo, imageUrl: "https://example.com/a.jpg")
        let updated = try await alice.elements.update(element.id, in: room, ["content": .string("caption"), "imageUrl": .null])
        let toggled = try await alice.reactions.toggle(room: room, element: kickoff)
        let page = try await alice.reactions.list(room: room, element: kickoff, limit: 10)
        let message = try await bob.messages.send("hi", in: room)
        let messages = try await alice.messages.list(room: room, limit: 10)
        let read = try await alice.messages.markRead(room: room)
        let seen = try await alice.rooms.markSeen(room)
        let detail = try await alice.rooms.get(room)
        XCTAssertEqual(detail.name, "Design Team")
        XCTAssertEqual(Set(detail.members.map(\.username)), ["alice", "bob"])
        let elements = try await alice.elements.list(room: room)
        let deleted = try await alice.elements.delete(element.id, in: room)
        let post = try await bob.posts.create(content: "Post", imageUrl: nil)
        let liked = try await bob.posts.like(launch)
        let saved = try await bob.posts.save(launch)
        _ = try await bob.posts.unlike(launch)
        _ = try await bob.posts.unsave(launch)
        let states = try await bob.posts.interactionState([launch, post.id])
        let device = try await bob.devices.register(token: "apns-1", platform: "ios")
        let unregistered = try await bob.devices.unregister(token: "apns-1")
        let notifications = try await alice.notifications.list(limit: 10)
        let cleared = try await alice.elements.clear(room: room)
        let eventPage = try await backend.eventPage(since: 0, limit: 50)
        // The fault routes, where the server has them (their schemas come with them).
        var faultSamples: [(String, Any)] = []
        if schemas["TestFaultResult"] != nil {
            let sid = try await RawPollingSocket.connect(to: backend.url, token: world.user("bob").token)
            let delayed = try await backend.faults.delay(.session(sid), milliseconds: 10)
            let active = try await backend.faults.active()
            faultSamples = [("TestFaultResult", delayed), ("TestFault", try XCTUnwrap(active.first))]
            _ = try await backend.faults.clear()
        }
        let carol = backend.client(as: world.user("carol"))
        let exported = try await carol.auth.export()
        XCTAssertEqual(exported.user.username, "carol")
        XCTAssertEqual(exported.rooms.map(\.name), ["Renamed"])
        let dave = backend.client(token: session.token)
        let accountDeleted = try await dave.auth.deleteAccount(password: "correct horse")
        // Backups are off in the test server, so /health carries none: the model is checked from a minimal answer.
        let backup = try TouchSyncJSON.object(["status": .string("ok"), "directory": .string("/b")]).decode(BackupStatus.self)
        let loggedOut = try await bob.auth.logout()
        let limitsState = try await backend.setWriteLimits(enabled: true)
        XCTAssertTrue(limitsState.enabled)
        let clockState = try await backend.clock.advance(by: 31 * 86_400)
        XCTAssertEqual(clockState.offsetSeconds, 31 * 86_400)
        XCTAssertTrue(clockState.moved)
        let reset = try await backend.reset()

        XCTAssertEqual(mine.count, 2)
        XCTAssertFalse(notifications.isEmpty, "bob's heart and element notified alice")
        let withReactions = try XCTUnwrap(elements.first { $0.reactions != nil }?.reactions, "kickoff has bob's heart")
        let event = try XCTUnwrap(eventPage.events.first)

        // Each model, as decoded from a live answer, against its schema.
        let samples: [(String, Any)] = [
            ("Health", health), ("Session", session), ("Session", login), ("Session", refreshed), ("User", me),
            ("Room", created), ("Room", renamed), ("Room", read), ("Room", seen), ("Badges", seen.badges), ("RoomDetail", detail),
            ("MemberAdded", added), ("MemberLeft", left), ("Element", element), ("Element", updated),
            ("ElementReactions", withReactions), ("ToggleResult", toggled), ("Reaction", toggled.reaction),
            ("ElementStats", toggled.elementStats), ("ReactionPage", page), ("Message", message), ("Message", try XCTUnwrap(messages.first)),
            ("ElementDeleted", deleted), ("Post", post), ("PostInteractionState", liked), ("PostInteractionState", saved),
            ("InteractionStates", states), ("Device", device), ("DeviceDeleted", unregistered),
            ("Notification", try XCTUnwrap(notifications.first)), ("RoomCleared", cleared), ("RealtimeEventPage", eventPage),
            ("RealtimeEvent", event), ("RealtimeEventTarget", event.target), ("LoggedOut", loggedOut), ("TestResetResult", reset),
            ("FixtureResult", world.result), ("AccountExport", exported), ("AccountExport.user", exported.user),
            ("AccountDeleted", accountDeleted), ("BackupStatus", backup), ("TestLimits", limitsState), ("TestClock", clockState),
        ] + faultSamples
        var checked: Set<String> = []
        for (name, value) in samples {
            guard let schema = schemas[name] else {
                XCTFail("components.schemas has no \(name) (the kit's \(type(of: value)) models it): renamed on the server?")
                continue
            }
            for problem in Self.mismatches(model: value, schemaName: name, schema: schema) { XCTFail(problem) }
            checked.insert(name)
        }
        // The enumeration the kit models as a Swift enum: the same cases.
        let elementTypes = (schemas["ElementType"]?["enum"]?.array ?? []).compactMap(\.string)
        XCTAssertEqual(Set(ElementType.allCases.map(\.rawValue)), Set(elementTypes), "ElementType cases vs schema ElementType")
        checked.insert("ElementType")

        // Every schema of the document is modelled and checked above, or is not an answer the kit decodes.
        for name in Set(schemas.keys).subtracting(checked).subtracting(Self.notModelled.keys).sorted() {
            XCTFail("components.schemas.\(name) has no model in the kit (or it is not checked here): add one, and a sample above")
        }
    }

    /// Models that hold another model whose fields the wire object carries at its own level.
    static let flattened = ["RoomDetail": "room"]

    /// Schemas with no model of their own, with the reason.
    static let notModelled: [String: String] = [
        "Error": "decoded into APIFailure", "MobileError": "decoded into APIFailure", "ErrorCode": "APIFailure.code",
        "EngineIOError": "the Socket.IO transport is not wrapped", "InteractionStateResponse": "the envelope of InteractionStates",
        "FixtureDocument": "built by Fixtures", "RegisterRequest": "call parameters", "LoginRequest": "call parameters",
        "CreateRoomRequest": "call parameters", "RenameRoomRequest": "call parameters", "AddMemberRequest": "call parameters",
        "CreateElementRequest": "call parameters", "UpdateElementRequest": "call parameters", "SendMessageRequest": "call parameters",
        "CreatePostRequest": "call parameters", "InteractionStateRequest": "call parameters", "RegisterDeviceRequest": "call parameters",
        "TestFaultRequest": "call parameters", "TestLimitsRequest": "call parameters", "TestClockRequest": "call parameters", "DeleteAccountRequest": "call parameters", "TestFaultList": "the list envelope of TestFault (ActiveFault)",
    ]

    // MARK: helpers

    /// `/api/rooms/{roomId}` → `/api/rooms/:roomId` (the kit's spelling of a path parameter).
    static func template(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { s in
            s.hasPrefix("{") && s.hasSuffix("}") ? ":" + s.dropFirst().dropLast() : String(s)
        }.joined(separator: "/")
    }

    /// The differences between a model instance's stored properties and an object schema.
    static func mismatches(model: Any, schemaName: String, schema: TouchSyncJSON) -> [String] {
        let modelName = String(describing: type(of: model))
        let properties = schema["properties"]?.object ?? [:]
        let required = Set((schema["required"]?.array ?? []).compactMap(\.string))
        var fields: [String: Bool] = [:]  // name -> is optional
        for child in Mirror(reflecting: model).children {
            guard let label = child.label else { continue }
            if flattened[schemaName] == label {
                // Its fields are the schema's own (the wire object is flat).
                for inner in Mirror(reflecting: child.value).children {
                    if let l = inner.label { fields[l] = inner.value is any OptionalValue }
                }
                continue
            }
            fields[label] = child.value is any OptionalValue
        }
        var out: [String] = []
        for name in fields.keys.sorted() where properties[name] == nil {
            out.append("\(modelName).\(name) is not a property of schema \(schemaName) (its properties: "
                + "\(properties.keys.sorted().joined(separator: ", "))): renamed or removed on one side")
        }
        for name in properties.keys.sorted() where fields[name] == nil {
            out.append("schema \(schemaName) has property \(name) that \(modelName) lacks: add it to the model")
        }
        for (name, isOptional) in fields.sorted(by: { $0.key < $1.key }) {
            guard let property = properties[name] else { continue }
            let mayBeMissing = !required.contains(name) || nullable(property)
            if mayBeMissing != isOptional {
                out.append("\(modelName).\(name) is \(isOptional ? "optional" : "not optional") but schema \(schemaName) says it "
                    + (mayBeMissing ? "may be null or absent" : "is required and never null"))
            }
        }
        return out
    }

    /// A property schema that admits `null`: `"type": [..., "null"]`, or `anyOf` with `{"type": "null"}`.
    static func nullable(_ property: TouchSyncJSON) -> Bool {
        if property["type"]?.array?.contains(.string("null")) == true { return true }
        if property["type"]?.string == "null" { return true }
        for key in ["anyOf", "oneOf"] {
            if property[key]?.array?.contains(where: { nullable($0) }) == true { return true }
        }
        return false
    }
}

/// Lets the test tell an optional stored property from a required one through `Mirror`.
protocol OptionalValue {}
extension Optional: OptionalValue {}
