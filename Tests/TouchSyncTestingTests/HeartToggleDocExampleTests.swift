import Foundation
import TouchSyncTesting
import XCTest

/// The complete XCTest class of docs/testing-ios.md, against a live server: the documented
/// example compiles and passes as printed (only the class name and its server differ).
final class HeartToggleDocExampleTests: LiveServerTestCase {
    // The rest of this class is docs/testing-ios.md's example as printed, so the example runs.
    override class func setUp() {
        super.setUp()
        if let url = server?.url { setenv("TOUCHSYNC_URL", url.absoluteString, 1) }
    }

    override class func tearDown() {
        unsetenv("TOUCHSYNC_URL")
        super.tearDown()
    }

    var backend: TouchSyncBackend!
    var world: LoadedFixtures!

    override func setUp() async throws {
        // TOUCHSYNC_URL comes from `touchsync exec` (TEST_RUNNER_TOUCHSYNC_URL under xcodebuild).
        backend = try await TouchSyncBackend.fromEnvironment()
        try await backend.reset()
        world = try await backend.load(Fixtures()
            .user("alice").user("bob")
            .room("Design Team", createdBy: "alice", members: ["bob"])
            .element("photo", in: "Design Team", by: "alice", type: .photo, imageUrl: "https://example.com/cat.jpg"))
    }

    func testBobsHeartReachesAlice() async throws {
        let room = world.room("Design Team").id
        let photo = world.element("photo").id
        let events = try await backend.events(from: .now)

        // What the heart button does, as bob.
        let bob = backend.client(as: world.user("bob"))
        let result = try await bob.reactions.toggle(room: room, element: photo)
        XCTAssertEqual(result.action, "added")
        XCTAssertEqual(result.elementStats.count, 1)

        // What alice's app receives.
        let added = try await events.next("element:reaction:added",
                                          where: { $0.payload["elementId"]?.string == photo }, timeout: 5)
        XCTAssertEqual(added.target.roomId, room)
        let reaction = try XCTUnwrap(added.payload["reaction"]).decode(Reaction.self)
        XCTAssertEqual(reaction.user.username, "bob")

        // And the state the app shows after a reload.
        let alice = backend.client(as: world.user("alice"))
        let element = try await alice.elements.list(room: room).first { $0.id == photo }
        XCTAssertEqual(element?.reactions?.count, 1)
        XCTAssertEqual(element?.reactions?.hasReacted, false, "alice has not reacted herself")
    }
}
