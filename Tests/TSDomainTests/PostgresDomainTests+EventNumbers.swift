import Foundation
import TSDomain
import TSJSON
import XCTest

/// The room's event numbers (`rooms.event_seq`) on two "nodes" sharing one PostgreSQL database:
/// taken in the write transaction, under the room's row lock, so they follow the commit order
/// across nodes (docs/realtime-cluster.md, "Order across nodes").
extension PostgresDomainTests {
    /// Both nodes write to one room at once (creates, toggles, messages, renames): the numbers of
    /// all their events are exactly 1...n, each once, and each node published its own in
    /// increasing order (its commit order); the last toggle by number carries the final count.
    func testTwoNodesWritingToOneRoomNumberItsEventsInOneCommitOrder() async throws {
        let (a, b) = (nodes[0].1, nodes[1].1)
        let (users, room, element) = try await DomainFixture.roomWithElement(a, users: 3)
        let note = Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, domain) in [a, b].enumerated() {
                for i in 0..<12 {
                    let user = users[(n + i) % users.count].id
                    group.addTask {
                        switch i % 4 {
                        case 0: _ = try await domain.elements.create(roomId: room, actor: user, input: note, originSocketId: nil)
                        case 1: _ = try await domain.messages.send(roomId: room, actor: user, input: Input(["text": "hi"]), originSocketId: nil)
                        case 2: _ = try await domain.rooms.rename(roomId: room, actor: user, input: Input(["name": .string("r\(n)\(i)")]), originSocketId: nil)
                        default: _ = try await domain.reactions.toggle(roomId: room, elementId: element, actor: user, originSocketId: nil)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let perNode = published.map { $0.events.filter { $0.roomId == room } }
        for (n, events) in perNode.enumerated() {
            let numbers = events.compactMap(\.seq)
            XCTAssertEqual(numbers.count, events.count, "every event of node \(n) is numbered")
            XCTAssertEqual(numbers, numbers.sorted(), "node \(n) publishes in commit order, which is number order")
        }
        let all = perNode.flatMap { $0 }.sorted { $0.seq! < $1.seq! }
        XCTAssertEqual(all.map { $0.seq! }, Array(1...Int64(all.count)), "one number per event, none lost, none twice (the first create took 1)")
        var lastStats: ElementStats?
        for e in all {
            switch e.kind {
            case .reactionAdded(_, _, let s), .reactionRemoved(_, _, let s): lastStats = s
            default: break
            }
        }
        let page = try await a.reactions.list(roomId: room, elementId: element, viewer: users[0].id, limit: 10, before: nil)
        XCTAssertEqual(lastStats?.totalReactions, Int64(page.reactions.count), "the toggle numbered last carries the count that stays")
    }

    /// Creates on one node while the other clears, many times: a count kept from the events in
    /// number order (+1 created, 0 cleared) ends equal to the room's stored count. A clear that
    /// locked the room only after its DELETE could be numbered after a create it did not delete.
    func testACountKeptFromTheEventsInNumberOrderEndsEqualToTheStoredOneWhileTheOtherNodeClears() async throws {
        let (a, b) = (nodes[0].1, nodes[1].1)
        let (users, room, _) = try await DomainFixture.roomWithElement(a, users: 2)
        let note = Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<60 {
                if i % 6 == 0 {
                    group.addTask { _ = try await a.elements.clear(roomId: room, actor: users[0].id, originSocketId: nil) }
                } else {
                    group.addTask { _ = try await b.elements.create(roomId: room, actor: users[1].id, input: note, originSocketId: nil) }
                }
            }
            try await group.waitForAll()
        }
        var count: Int64 = 0
        for e in published.flatMap(\.events).filter({ $0.roomId == room }).sorted(by: { $0.seq! < $1.seq! }) {
            switch e.kind {
            case .elementCreated: count += 1
            case .roomCleared: count = 0
            default: break
            }
        }
        let stored = try await a.rooms.myRooms(viewer: users[0].id).first { $0.id == room }?.elementCount
        XCTAssertEqual(count, stored)
    }

    /// A join reads the room's last number under its row lock: its elements are exactly those
    /// whose creation was numbered up to it, whichever node created them.
    func testAJoinsElementsAreExactlyTheEventsNumberedUpToItsRead() async throws {
        let (a, b) = (nodes[0].1, nodes[1].1)
        let (users, room, _) = try await DomainFixture.roomWithElement(a, users: 2)
        let note = Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1])
        let read = LockedJoinRead()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                let domain = i % 2 == 0 ? a : b
                group.addTask { _ = try await domain.elements.create(roomId: room, actor: users[i % 2].id, input: note, originSocketId: nil) }
            }
            group.addTask { _ = try await b.elements.join(roomId: room, viewer: users[1].id) { read.set($0) } }
            try await group.waitForAll()
        }
        guard let r = read.value, let after = r.afterSeq else { return XCTFail("the join read the room's number") }
        var createdUpTo: Set<String> = []
        for e in published.flatMap(\.events) where e.roomId == room {
            if case .elementCreated(let el) = e.kind, let n = e.seq, n <= after { createdUpTo.insert(el.id) }
        }
        XCTAssertEqual(Set(r.elements.map(\.id)), createdUpTo)
    }
}

/// The join's read, handed over from the writer thread.
private final class LockedJoinRead: @unchecked Sendable {
    private let lock = NSLock()
    private var read: ElementService.JoinRead?
    func set(_ r: ElementService.JoinRead) { lock.lock(); read = r; lock.unlock() }
    var value: ElementService.JoinRead? { lock.lock(); defer { lock.unlock() }; return read }
}
