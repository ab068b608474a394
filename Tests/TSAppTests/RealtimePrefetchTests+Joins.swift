import Foundation
import TSJSON
import TSTestSupport
import XCTest
@testable import TSDomain
@testable import TSRealtime
@testable import TSRoutes
@testable import TSSocketIO

/// Who has hearted an element is read only when a socket other than the actor's can receive the
/// reaction; a socket that joins the room while the event waits either has the change in its
/// join batch or receives the event, personalised from a read started before the drain got to
/// it. Over a real socket against the real server; the room's queue is held on a missing event
/// number (`realtime.gapWait` 60 s, released by publishing that number), which forces each
/// interleaving deterministically.
final class RealtimePrefetchJoinTests: XCTestCase {
    var live: LiveServer!
    var api: APIClient!

    override func setUp() async throws {
        live = try LiveServer(overrides: ["testMode": true, "realtime.gapWait": "60s",
                                          "realtime.pingIntervalMs": 20_000, "realtime.pingTimeoutMs": 20_000])
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live.stop() }

    /// Bob's socket (connected, in no room yet), bob's id, and an element bob has hearted.
    private func bobWithAHeart() async throws -> (ws: RawWebSocketClient, socket: SocketIOSocket, bobId: String, elementId: String) {
        let (alice, bob, room) = try await api.aliceAndBobInOneRoom()
        let created = try await api.post("/api/rooms/\(room)/elements", ["type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10],
                                         token: alice)
        XCTAssertEqual(created.status, 201)
        let elementId = try XCTUnwrap(created.json["data"]?["id"]?.stringValue ?? created.json["id"]?.stringValue)
        let toggled = try await api.post("/api/rooms/\(room)/elements/\(elementId)/reactions/toggle", token: bob)
        XCTAssertEqual(toggled.status, 200)
        let me = try await api.get("/api/auth/me", token: bob)
        let bobId = try XCTUnwrap(me.json["data"]?["id"]?.stringValue ?? me.json["id"]?.stringValue ?? me.json["user"]?["id"]?.stringValue)

        let ws = try RawWebSocketClient(port: live.port, target: "/socket.io/?EIO=4&transport=websocket")
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { throw XCTSkip("no Engine.IO open packet") }
        ws.send("40" + JSONValue.object(["token": .string(bob)]).serializedString())
        guard case .text(let connected) = ws.receiveSkippingPings(), connected.hasPrefix("40{") else { throw XCTSkip("not connected") }
        let socket = try XCTUnwrap(live.server.broadcaster.hub.connectedSockets.first { $0.userID == bobId })
        return (ws, socket, bobId, elementId)
    }

    private func reactionAdded(elementId: String, roomId: String, seq: Int64) -> DomainEvent {
        let alice = PublicUser(id: "alice-id", username: "alice", firstName: nil, avatarUrl: nil)
        let reaction = Reaction(id: "reaction-\(seq)", elementId: elementId, userId: alice.id, createdAt: 0, user: alice)
        return DomainEvent(kind: .reactionAdded(elementId: elementId, reaction: reaction,
                                                stats: ElementStats(totalReactions: 2, hasReacted: true, topReactors: [alice])),
                           roomId: roomId, actorId: alice.id, originSocketId: nil, seq: seq)
    }

    private func cleared(_ roomId: String, seq: Int64) -> DomainEvent {
        DomainEvent(kind: .roomCleared(deleted: 0), roomId: roomId, actorId: "alice-id", originSocketId: nil, seq: seq)
    }

    /// The `hasReacted` bob's socket got with the room's `element:reaction:added`, or nil.
    private func hasReacted(on ws: RawWebSocketClient) -> Bool? {
        for _ in 0..<50 {
            guard case .text(let t) = ws.receiveSkippingPings(timeout: 5) else { return nil }
            guard t.hasPrefix("42["), let frame = try? JSONValue.parse(Array(t.utf8.dropFirst(2))),
                  frame[0]?.stringValue == RealtimeEvents.reactionAdded.name else { continue }
            return frame[1]?["stats"]?["hasReacted"]?.boolValue
        }
        return nil
    }

    /// A room whose event 1 has been delivered: its next number is 2, and a later one waits for it.
    private func numberedRoom(_ room: String) async -> (RealtimeBroadcaster, String) {
        let b = live.server.broadcaster
        b.publish(cleared(room, seq: 1))
        await b.flush()
        return (b, room)
    }

    private func join(_ socket: SocketIOSocket, _ roomId: String, afterSeq: Int64) -> DeliveryTicket {
        let ticket = DeliveryTicket()
        live.server.broadcaster.enqueueJoin(.init(socket: socket, roomId: roomId, elements: [], afterSeq: afterSeq, ticket: ticket))
        return ticket
    }

    /// Nobody in the room: the reaction is logged (0 recipients), and who has hearted is not read.
    func testNoListenerNoRead() async throws {
        let b = live.server.broadcaster
        let before = b.readCounters
        b.publish(reactionAdded(elementId: "e-nobody", roomId: "quiet-room", seq: 1))
        await b.flush()
        XCTAssertEqual(b.readCounters.skipped, before.skipped + 1)
        XCTAssertEqual(b.readCounters.inDrain, before.inDrain)
    }

    /// The join is queued (held behind a missing number) before the reaction is published: the
    /// reaction's read starts at its publish, although the room's channel is still empty.
    func testAJoinQueuedBeforeTheEventStartsItsRead() async throws {
        let (ws, socket, _, elementId) = try await bobWithAHeart()
        let (b, room) = await numberedRoom("held-join-first")
        b.publish(cleared(room, seq: 3))  // waits for 2
        let ticket = join(socket, room, afterSeq: 2)
        b.publish(reactionAdded(elementId: elementId, roomId: room, seq: 4))
        XCTAssertEqual(b.startedReads(roomId: room), 2, "the reaction's read (and the cleared one's members) started, its socket not in the room yet")
        XCTAssertTrue(b.hub.sockets(inRoom: RealtimeConfiguration.roomChannel(room)).isEmpty)
        let inDrainBefore = b.readCounters.inDrain
        b.publish(cleared(room, seq: 2))
        let joined = await ticket.wait()
        XCTAssertTrue(joined)
        XCTAssertEqual(hasReacted(on: ws), true, "bob's own variant: he has hearted the element")
        await b.flush()
        XCTAssertEqual(b.readCounters.inDrain, inDrainBefore, "nothing read in the drain")
    }

    /// The reaction is queued first (nobody in the room, nobody joining: no read), then a join is
    /// placed before it: the join starts the waiting reaction's read.
    func testAJoinPlacedBeforeAWaitingEventStartsItsRead() async throws {
        let (ws, socket, _, elementId) = try await bobWithAHeart()
        let (b, room) = await numberedRoom("held-event-first")
        b.publish(reactionAdded(elementId: elementId, roomId: room, seq: 3))  // waits for 2
        XCTAssertEqual(b.startedReads(roomId: room), 0, "nobody can receive it yet: not read")
        let ticket = join(socket, room, afterSeq: 2)
        XCTAssertEqual(b.startedReads(roomId: room), 1, "the join started it")
        let inDrainBefore = b.readCounters.inDrain
        b.publish(cleared(room, seq: 2))
        let joined = await ticket.wait()
        XCTAssertTrue(joined)
        XCTAssertEqual(hasReacted(on: ws), true)
        await b.flush()
        XCTAssertEqual(b.readCounters.inDrain, inDrainBefore, "nothing read in the drain")
    }
}
