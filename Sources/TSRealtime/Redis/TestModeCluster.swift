import TSDomain
import TSSocketIO

/// The other test-mode nodes of a cluster, as the test routes see them (docs/test-mode.md
/// "Against a cluster"). The server implements it over Redis (`RedisEventBridge+Control.swift`);
/// a single node has none, and then a reset or a fixtures load concerns this node only.
public protocol TestModeCluster: Sendable {
    /// Has every other live test-mode node apply `step` to its own memory, then every node (this
    /// one included) continue its event log after one common sequence number, returned in the
    /// outcome. Bounded by the implementation's deadline; nodes that did not confirm in time are
    /// named in `unanswered`.
    func synchronize(_ step: TestModeClusterStep, local: TestModeLocalNode) async -> TestModeClusterOutcome

    /// Has every other live test-mode node set its movable clock's offset to `offsetMicroseconds`
    /// (`/api/test/clock`), so one call moves time on every node. Same deadline and `unanswered`.
    func moveClock(offsetMicroseconds: Int64) async -> TestModeClusterOutcome
}

/// What a cluster synchronization asks of the other nodes.
public enum TestModeClusterStep: String, Sendable {
    /// Disconnect every socket and forget the event log, as `POST /api/test/reset` does here.
    case reset
    /// Only log the events received so far (after a fixtures load, whose events travel to them).
    case flush
}

public struct TestModeClusterOutcome: Sendable, Equatable {
    /// Nodes that applied the step, this one included.
    public var nodes: Int
    /// Live nodes (heard from recently) that did not confirm within the deadline, described for a person.
    public var unanswered: [String]
    /// The sequence number after which every node that confirmed continues its event log.
    public var sequence: Int64

    public init(nodes: Int, unanswered: [String], sequence: Int64) {
        self.nodes = nodes
        self.unanswered = unanswered
        self.sequence = sequence
    }
}

/// What test mode keeps in one node's memory, and how a reset clears it: the sockets (their
/// faults live with their connections and end with them) and the realtime event log. The data
/// is in the database, which every node shares. The fixture loader's password hashes are kept:
/// a cached hash is a valid salted hash of its password whatever the database holds.
public struct TestModeLocalNode: Sendable {
    let broadcaster: RealtimeBroadcaster
    var hub: SocketIOServer { broadcaster.hub }
    let eventLog: RealtimeEventLog
    /// The node's movable clock (`/api/test/clock`), nil when its domain runs on another clock.
    public let clock: MovableWallClock?

    public init(broadcaster: RealtimeBroadcaster, eventLog: RealtimeEventLog, clock: MovableWallClock? = nil) {
        self.broadcaster = broadcaster
        self.eventLog = eventLog
        self.clock = clock
    }

    /// Disconnects every socket (reason `test reset`) and forgets the events emitted until now;
    /// returns how many sockets were connected.
    @discardableResult
    public func reset() async -> Int {
        let sockets = hub.connectedSockets.count
        hub.disconnectAll(reason: "test reset")
        await clearEvents()
        return sockets
    }

    /// Forgets the logged events, once the events still on their way have been logged.
    public func clearEvents() async {
        await broadcaster.flush()
        eventLog.clear()
    }

    /// Waits until the events handed to the broadcaster so far are emitted and logged.
    public func flush() async { await broadcaster.flush() }

    public var lastSequence: Int64 { eventLog.lastSequence }

    /// Continues the event log after `sequence` (never moves it back).
    public func advance(to sequence: Int64) { eventLog.advance(to: sequence) }
}
