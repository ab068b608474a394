import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TouchSyncTesting
import XCTest

/// The kit used exactly as an app's XCTest target uses it, against a real `touchsync serve
/// --test-mode` process: configuration from the environment, reset, fixtures, every REST call,
/// awaiting events (and a timeout's message), faults.
final class TouchSyncBackendTests: LiveServerTestCase {
    var backend: TouchSyncBackend!

    override func setUp() async throws {
        backend = try await makeBackend()
        try await backend.reset()
    }

    static let world = Fixtures()
        .user("alice", firstName: "Alice").user("bob", firstName: "Bob").user("carol")
        .room("Design Team", createdBy: "alice", members: ["bob"])
        .element("kickoff", in: "Design Team", by: "alice", type: .note, content: "Kick-off")
        .element("photo", in: "Design Team", by: "bob", type: .photo, imageUrl: "https://example.com/p.jpg")
        .reaction(on: "kickoff", by: "bob")
        .message("welcome", in: "Design Team", by: "alice", text: "Welcome!")
        .post("launch", by: "alice", content: "We launched")
        .like("launch", by: "bob").save("launch", by: "bob")
        .device("apns-token-bob", of: "bob")

    // MARK: configuration

    func testFromEnvironmentTakesEitherVariableAndSaysWhatIsMissing() async throws {
        let url = try serverURL().absoluteString
        let viaRunner = try await TouchSyncBackend.fromEnvironment(["TEST_RUNNER_TOUCHSYNC_URL": url])
        XCTAssertEqual(viaRunner.url.absoluteString, url, "the copy touchsync exec exports for xcodebuild is read too")

        do {
            _ = try await TouchSyncBackend.fromEnvironment([:])
            XCTFail("no URL must not pass")
        } catch let error as TouchSyncError {
            guard case .notConfigured = error else { return XCTFail("\(error)") }
            XCTAssertTrue(error.description.contains("TOUCHSYNC_URL"), error.description)
            XCTAssertTrue(error.description.contains("touchsync exec"), error.description)
        }
        do {
            _ = try await TouchSyncBackend.fromEnvironment(["TOUCHSYNC_URL": "not a url"])
            XCTFail("a value that is not a URL must not pass")
        } catch let error as TouchSyncError {
            guard case .notConfigured = error else { return XCTFail("\(error)") }
        }
    }

    func testFromEnvironmentRefusesAServerWithoutTestMode() async throws {
        let plain = try TouchSyncServerProcess(arguments: [])
        defer { plain.stop() }
        do {
            _ = try await TouchSyncBackend.fromEnvironment(["TOUCHSYNC_URL": plain.url.absoluteString])
            XCTFail("a server without --test-mode must be refused")
        } catch let error as TouchSyncError {
            XCTAssertEqual(error, .notInTestMode(url: plain.url))
            XCTAssertTrue(error.description.contains("--test-mode"), error.description)
        }
    }

    // MARK: reset and fixtures

    func testLoadGivesTokensAndIdsByNameAndResetEmptiesEverything() async throws {
        let world = try await backend.load(Self.world)
        let alice = backend.client(as: world.user("alice"))
        let me = try await alice.auth.me()
        XCTAssertEqual(me.username, "alice")
        let rooms = try await alice.rooms.mine()
        XCTAssertEqual(rooms.map(\.id), [world.room("Design Team").id])
        XCTAssertEqual(rooms.first?.name, "Design Team")
        XCTAssertEqual(rooms.first?.elementCount, 2)
        XCTAssertEqual(world.result.counts["reactions"], 1)

        let reset = try await backend.reset()
        XCTAssertTrue(reset.tables.contains("users"), "\(reset.tables)")
        XCTAssertGreaterThanOrEqual(reset.lastEventSequence, world.lastEventSequence)
        do {
            _ = try await alice.auth.me()
            XCTFail("after a reset the user is gone")
        } catch TouchSyncError.api(let failure) {
            XCTAssertEqual(failure.status, 401)
            XCTAssertEqual(failure.code, "UNAUTHORIZED")
        }
    }

    func testABadFixtureIsThe400NamingTheField() async throws {
        do {
            _ = try await backend.load(Fixtures().user("alice").room("R", createdBy: "nobody"))
            XCTFail("a reference to no user must be refused")
        } catch TouchSyncError.api(let failure) {
            XCTAssertEqual(failure.status, 400)
            XCTAssertEqual(failure.code, "VALIDATION_ERROR")
            XCTAssertEqual(failure.field, "rooms[0].createdBy")
            XCTAssertTrue(failure.description.contains("POST /api/test/fixtures answered 400"), failure.description)
        }
    }

    // MARK: events

    /// The app's heart toggle: bob hearts alice's photo over REST, alice's app must hear
    /// `element:reaction:added` (the payload as a member other than bob sees it).
    func testNextAwaitsTheHeartAnotherMemberAdded() async throws {
        let world = try await backend.load(Self.world)
        let room = world.room("Design Team").id, photo = world.element("photo").id
        let events = try await backend.events(from: .now)
        let bob = backend.client(as: world.user("bob"))
        let toggled = try await bob.reactions.toggle(room: room, element: photo)
        XCTAssertEqual(toggled.action, "added")
        let added = try await events.next("element:reaction:added", where: { $0.payload["elementId"]?.string == photo })
        XCTAssertEqual(added.target.roomId, room)
        let reaction = try XCTUnwrap(added.payload["reaction"]).decode(Reaction.self)
        XCTAssertEqual(reaction.userId, world.user("bob").id)
        XCTAssertEqual(try XCTUnwrap(added.payload["stats"]).decode(ElementStats.self).count, 1)
    }

    func testNextWaitsForAnEventThatArrivesLater() async throws {
        let world = try await backend.load(Self.world)
        let events = try await backend.events(from: .after(world.lastEventSequence))
        let alice = backend.client(as: world.user("alice"))
        let room = world.room("Design Team").id
        async let message = events.next("message:created", timeout: 20)
        // The await above is already long-polling when this request is made (or the event is
        // read on its first request): either way it must be delivered, in well under the timeout.
        let started = Date()
        _ = try await alice.messages.send("later", in: room)
        let got = try await message
        XCTAssertEqual(got.payload["message"]?["text"]?.string, "later")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    func testATimeoutNamesTheEventAwaitedAndTheEventsThatArrived() async throws {
        let world = try await backend.load(Self.world)
        let events = try await backend.events(from: .now)
        let alice = backend.client(as: world.user("alice"))
        _ = try await alice.messages.send("hello", in: world.room("Design Team").id)
        do {
            _ = try await events.next("element:deleted", timeout: 1)
            XCTFail("nothing was deleted")
        } catch TouchSyncError.eventTimeout(let timeout) {
            XCTAssertEqual(timeout.awaited, "element:deleted")
            XCTAssertEqual(timeout.arrived.map(\.event), ["message:created"])
            let text = TouchSyncError.eventTimeout(timeout).description
            XCTAssertTrue(text.contains("waiting for element:deleted"), text)
            XCTAssertTrue(text.contains("events that did arrive: #"), text)
            XCTAssertTrue(text.contains("message:created"), text)
        }
        // What arrived stays available to a later await.
        _ = try await events.next("message:created", timeout: 1)
    }

    func testIterationYieldsEveryEventInOrder() async throws {
        let world = try await backend.load(Self.world)
        let events = try await backend.events(from: .now)
        let alice = backend.client(as: world.user("alice"))
        let room = world.room("Design Team").id
        for text in ["one", "two", "three"] { _ = try await alice.messages.send(text, in: room) }
        var texts: [String] = []
        for try await event in events where event.event == "message:created" {
            texts.append(event.payload["message"]?["text"]?.string ?? "?")
            if texts.count == 3 { break }
        }
        XCTAssertEqual(texts, ["one", "two", "three"])
    }

    /// The server side of `next`: `?wait=` holds the request until an event is logged.
    func testLongPollIsAnsweredWhenTheEventIsLoggedNotWhenTheWaitEnds() async throws {
        let world = try await backend.load(Self.world)
        let since = world.lastEventSequence
        let backend = self.backend!
        let started = Date()
        async let page = backend.eventPage(since: since, event: "message:created", wait: 25)
        let alice = backend.client(as: world.user("alice"))
        _ = try await alice.messages.send("now", in: world.room("Design Team").id)
        let answered = try await page
        XCTAssertEqual(answered.events.map(\.event), ["message:created"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "answered by the event, not by the 25 s wait")

        let empty = try await backend.eventPage(since: answered.lastSequence, wait: 0.3)
        XCTAssertEqual(empty.events, [], "a wait that runs out answers with no events")

        var tooLong = URLRequest(url: backend.url.appendingPathComponent("api/test/events"))
        tooLong.url = URL(string: backend.url.absoluteString + "/api/test/events?wait=31s")
        let (body, response) = try await RawPollingSocket.fetch(tooLong)
        XCTAssertEqual(response, 400)
        XCTAssertTrue(body.contains("\"field\":\"wait\""), body)
    }

    // MARK: faults

    /// Every fault call on a real connected socket: bob's app stand-in opens an Engine.IO
    /// polling session with his token (raw HTTP: the kit has no Socket.IO client), then each
    /// typed call must act on exactly that session.
    func testFaultCallsActOnAConnectedSocket() async throws {
        let world = try await backend.load(Self.world)
        let bob = world.user("bob")
        do {
            _ = try await backend.faults.active()
        } catch TouchSyncError.api(let failure) where failure.status == 404 {
            throw XCTSkip("fault endpoint not present on this server (GET /api/test/faults answered 404)")
        }
        let sid = try await RawPollingSocket.connect(to: backend.url, token: bob.token)
        let faults = backend.faults

        let delayed = try await faults.delay(.user(bob.id), milliseconds: 200)
        XCTAssertEqual(delayed.action, "delay")
        XCTAssertEqual(delayed.sessions, [sid])
        var active = try await faults.active()
        XCTAssertEqual(active.map(\.sid), [sid])
        XCTAssertEqual(active.first?.userId, bob.id)
        XCTAssertEqual(active.first?.delayMilliseconds, 200)

        let held = try await faults.hold(.session(sid))
        XCTAssertEqual(held.sessions, [sid])
        active = try await faults.active()
        XCTAssertEqual(active.first?.holding, true)
        let released = try await faults.release(.session(sid))
        XCTAssertEqual(released.sessions, [sid])
        let dropped = try await faults.drop(.user(bob.id), events: ["element:created"], count: 2)
        XCTAssertEqual(dropped.sessions, [sid])
        active = try await faults.active()
        XCTAssertEqual(active.first?.dropEvents, ["element:created"])
        let cleared = try await faults.clear(.user(bob.id))
        XCTAssertEqual(cleared.sessions, [sid])
        active = try await faults.active()
        XCTAssertEqual(active, [])
        _ = try await faults.clear()

        let cut = try await faults.disconnect(.session(sid), reason: .serverDisconnect)
        XCTAssertEqual(cut.reason, "server disconnect")
        XCTAssertEqual(cut.sessions, [sid])

        do {
            try await faults.delay(.user(world.user("carol").id), milliseconds: 10)
            XCTFail("carol has no socket: nothing to act on")
        } catch TouchSyncError.api(let failure) {
            XCTAssertEqual(failure.status, 404, failure.description)
        }
    }
}
