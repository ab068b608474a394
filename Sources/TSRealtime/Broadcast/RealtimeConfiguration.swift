/// Realtime settings (docs/realtime.md).
public struct RealtimeConfiguration: Sendable {
    public enum GlobalEvents: String, Sendable {
        /// Global events go to every socket of every member of the room (default).
        case members
        /// Global events go to every connected socket, as the first MyRooms clients expected.
        case all
    }

    /// `realtime.globalEvents`.
    public var globalEvents: GlobalEvents = .members
    /// `realtime.legacyJoinEvents`: also send one `element:created` per element on `room:join` (clients older than `elements:batch`).
    public var legacyJoinEvents: Bool = false
    /// Events (and joins) waiting for delivery in one room at most (docs/realtime.md "Order"):
    /// they wait only while the room's drain emits the ones before them, so reaching this bound
    /// means delivery is stuck; past it a new event is logged and dropped rather than held.
    public var maxQueuedEventsPerRoom: Int = 10_000
    /// `realtime.gapWait`: how long a room's delivery waits for a missing event number before
    /// giving it up (`RoomEventSequencer`); a number is missing only when its event was lost.
    public var gapWait: Duration = .milliseconds(500)
    /// Several nodes (`realtime.redisUrl`): a room's first event after its state was forgotten
    /// waits `gapWait` for earlier numbers still on their way from other nodes.
    public var holdFreshRooms = false
    /// Rooms whose next event number is remembered at most; the longest idle are forgotten first.
    public var maxTrackedRooms = 100_000
    /// A room idle this long is forgotten (its next event starts it fresh).
    public var forgetIdleRoomsAfter: Duration = .seconds(600)
    /// Reads of the events' recipients (members, hearts, rooms) in flight at once. A burst of
    /// events (a fixture or an import of hundreds of elements) starts one read per event when it
    /// is published; unbounded, they would fill the database's read queue (`database.maxQueuedReads`)
    /// and a refused read would leave its event's global part unsent. The others wait their turn
    /// here, in order, which is the order the room's drain needs them in. The server lowers it to a
    /// quarter of `database.maxQueuedReads` when that is smaller.
    public var maxReadsInFlight = 16

    public init(globalEvents: GlobalEvents = .members, legacyJoinEvents: Bool = false) {
        self.globalEvents = globalEvents
        self.legacyJoinEvents = legacyJoinEvents
    }

    /// The hub room of a TouchSync room.
    public static func roomChannel(_ roomId: String) -> String { "room:" + roomId }
    /// The private hub room of a user (all of that user's sockets).
    public static func userChannel(_ userId: String) -> String { "user:" + userId }
}
