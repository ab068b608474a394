import Dispatch
import Logging
import TSDomain
import TSJSON
import TSRealtime
import TSSocketIO
import TSSockets
import TSSync
import TSTestSupport
import XCTest

/// A session of another node restored here (docs/realtime-cluster.md, "Connection state recovery
/// across nodes") gets its CONNECT reply and its replay before any live event of its rooms, over a
/// real socket, however the socket's event loop is scheduled.
///
/// The restore runs off the socket's loop (the Socket.IO handlers run on the global pool), so what
/// it writes is queued on that loop. A room's drain runs on a loop too, and writes to that loop's
/// sockets inline. The test holds the socket's loop still, starts a drain there (an event of an
/// idle room: its job is queued on the loop before the restore's writes), lets the restore run,
/// and lets the loop go once the restore is over or waits for the loop: the drain's event must
/// still reach the client after the replay.
final class RecoveryReplayOrderTests: XCTestCase {
    /// No event of this test reads anything (`globalEvents: .all`, `room:cleared`).
    final class NoReads: RecipientReads {
        func memberIds(roomId: String) async throws -> [String] { [] }
        func heartedBy(elementId: String) async throws -> Set<String> { [] }
        func rooms(roomId: String, viewers: [String]) async throws -> [String: Room] { [:] }
    }

    /// The event loop's executor, counting the jobs first queued through it (a drain's start, the
    /// restore's wait for the loop); they run on the loop, in its one queue.
    /// As `EventLoopTaskExecutor` (a job runs on the loop, with this executor as its own, so a
    /// task preferring it does not hop again), counting the jobs queued.
    final class CountingExecutor: TaskExecutor {
        let loop: EventLoop
        let enqueued = LockedValue(0)
        /// Told of each job queued (the test waits on it rather than polling the count).
        let progress: AsyncStream<Void>.Continuation
        init(_ loop: EventLoop, progress: AsyncStream<Void>.Continuation) {
            self.loop = loop
            self.progress = progress
        }
        func enqueue(_ job: consuming ExecutorJob) {
            enqueued.withLock { $0 += 1 }
            progress.yield()
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            loop.execute { job.runSynchronously(on: executor) }
        }
    }

    /// The session store of another node: holds the restore until the test releases it, then
    /// restores `record` with `journal` through the broadcaster.
    final class HeldMirror: SocketIOSessionMirror {
        let broadcaster: RealtimeBroadcaster
        let record: SocketIOSessionRecord
        let journal: [RecoveryJournalEntry]
        let reached = DispatchSemaphore(value: 0)
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let outcome = LockedValue<String?>(nil)
        /// Told when the restore is over.
        let progress: AsyncStream<Void>.Continuation

        init(broadcaster: RealtimeBroadcaster, record: SocketIOSessionRecord, journal: [RecoveryJournalEntry],
             progress: AsyncStream<Void>.Continuation) {
            self.broadcaster = broadcaster
            self.record = record
            self.journal = journal
            self.progress = progress
        }

        func save(_ records: [SocketIOSessionRecord]) {}
        func forget(pid: String) {}

        func restore(_ attempt: SocketIORemoteRestore) async -> SocketIOSocket? {
            reached.signal()
            for await _ in release { break }
            let result = await broadcaster.restore(record, journal: journal, counter: attempt.offsetCounter, within: .seconds(10),
                                                   install: attempt.install)
            switch result {
            case .success(let (socket, replayed)):
                outcome.withLock { $0 = "restored, \(replayed) replayed" }
                progress.yield()
                return socket
            case .failure(let f):
                outcome.withLock { $0 = "failed: \(f)" }
                progress.yield()
                return nil
            }
        }
    }

    func testARestoredSessionGetsItsReplayBeforeALiveEventOfADrainOnItsLoop() async throws {
        let live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.eventLoops = 1
            $0.configure = {
                $0.recoveryMaxDisconnection = .seconds(60)
                $0.recoveryMaxBufferedPackets = 100
            }
        }) { io in io.setAuthenticator { _, auth in .accept(userID: auth?["user"]?.stringValue ?? "anon", data: .null) } }
        defer { live.stop() }
        let loop = try XCTUnwrap(live.http.eventLoopGroup?.loops.first)
        let (progress, progressed) = AsyncStream<Void>.makeStream()
        let executor = CountingExecutor(loop, progress: progressed)
        let recovery = ClusterRecovery(maxEvents: 100, window: .seconds(60), clock: SystemWallClock())
        let broadcaster = RealtimeBroadcaster(hub: live.io, reads: NoReads(), configuration: RealtimeConfiguration(globalEvents: .all),
                                              clock: SystemClock(), recovery: recovery, logger: Logger(label: "test"))
        broadcaster.runDrains(on: [executor])
        func cleared(_ actor: String, seq: Int64) -> DomainEvent {
            DomainEvent(kind: .roomCleared(deleted: 0), roomId: "r1", actorId: actor, originSocketId: nil, seq: seq)
        }
        // Events 1 and 2 of the room are processed here (kept for recovery) before the client comes.
        broadcaster.publish(cleared("a1", seq: 1))
        broadcaster.publish(cleared("a2", seq: 2))
        await broadcaster.flush()
        let startedBefore = executor.enqueued.withLock { $0 }

        // The other node had delivered event 1 to the client (its offset counter 5): 2 is missed.
        let nowMs = SystemWallClock().nowMicroseconds() / 1000
        let journal = [RecoveryJournalEntry(number: 1, counter: 5, roomId: "r1", seq: 1, kind: .event, sid: nil, ms: nowMs + 1)]
        let record = SocketIOSessionRecord(sid: "sid-1", pid: "pid-1", namespace: "/", node: "other", rooms: ["sid-1", "room:r1"], userID: "u1")
        let mirror = HeldMirror(broadcaster: broadcaster, record: record, journal: journal, progress: progressed)
        live.io.setSessionMirror(mirror)

        let ws = try RawWebSocketClient(port: live.port, target: "/socket.io/?EIO=4&transport=websocket")
        guard ws.status == 101, case .text(let open) = ws.receive(), open.hasPrefix("0") else { return XCTFail("no Engine.IO session") }
        ws.send("40" + JSONValue.object(["user": "u1", "pid": "pid-1", "offset": "other-5"]).serializedString())
        XCTAssertEqual(mirror.reached.wait(timeout: .now() + 10), .success, "the CONNECT reached the session store")

        // The socket's loop stands still; event 3 starts the room's drain there, queued first.
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        loop.execute {
            holding.signal()
            held.wait()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        broadcaster.publish(cleared("a3", seq: 3))
        XCTAssertEqual(executor.enqueued.withLock { $0 }, startedBefore + 1, "event 3's drain is queued on the held loop")

        // The restore runs (off the loop); the loop goes on once it is over, or waits for the loop.
        // Bounded: the restore gives up on the loop after its own 10 s and then reports its outcome.
        // One iterator for the whole test: an AsyncStream ends when its iterator goes away.
        var progressing = progress.makeAsyncIterator()
        mirror.releasing.yield()
        while mirror.outcome.withLock({ $0 }) == nil && executor.enqueued.withLock({ $0 }) < startedBefore + 2 {
            guard await progressing.next() != nil else { break }
        }
        held.signal()

        var got: [String] = []
        while got.filter({ $0.hasPrefix("42[\"room:cleared\"") }).count < 2, case .text(let m) = ws.receiveSkippingPings(timeout: 10) {
            got.append(m)
        }
        // The restore reports its outcome once the loop has taken its writes in, so the client can
        // read them first: wait for the report (the restore itself gives up after 10 s).
        while mirror.outcome.withLock({ $0 }) == nil {
            guard await progressing.next() != nil else { break }
        }
        XCTAssertEqual(mirror.outcome.withLock { $0 }, "restored, 1 replayed")
        XCTAssertTrue(got.first?.hasPrefix("40{") == true, "the CONNECT reply comes first: \(got)")
        let actors = got.filter { $0.hasPrefix("42[\"room:cleared\"") }.compactMap { m -> String? in
            (try? JSONValue.parse(String(m.dropFirst(2))))?.arrayValue?.dropFirst().first?["clearedBy"]?.stringValue
        }
        XCTAssertEqual(actors, ["a2", "a3"], "the replayed event 2, then the live event 3: \(got)")
    }
}
