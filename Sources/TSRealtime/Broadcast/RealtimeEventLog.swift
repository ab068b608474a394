import TSSync
import TSDomain
import TSJSON
import TSSocketIO

/// The realtime events the server emitted, in order, each with a sequence number: a bounded ring
/// buffer fed by the hub's emit observer (`SocketIOServer.setEmitObserver`). Read by
/// `GET /api/test/events` (test-target mode) and available to the inspector.
///
/// Recording is one lock, one slot write: the payload is kept as the `JSONValue` the hub already
/// built, never re-serialized on the emit path.
public final class RealtimeEventLog: Sendable {
    /// One recorded emit.
    public struct Entry: Sendable {
        /// 1, 2, 3, … in emit order; never reused, not even after `clear()`.
        public let sequence: Int64
        public let event: String
        public let args: [JSONValue]
        public let target: SocketIOEmitTarget
        /// The socket skipped by a room emit (the originating socket of a REST request or socket event).
        public let except: String?
        /// The user behind a `.socket` target, when the socket was known at emit time.
        public let targetUserId: String?
        public let recipients: Int
        /// Unix time in milliseconds.
        public let timestampMs: Int64
        /// Engine.IO sessions a test-mode `drop` fault kept this event from (docs/test-mode.md).
        public var droppedSessions: [String] = []

        public var json: JSONValue {
            var target: JSONObject
            switch self.target {
            case .room(let name):
                target = ["type": "room", "name": .string(name)]
                if name.hasPrefix("room:") {
                    target["roomId"] = .string(String(name.dropFirst(5)))
                } else if name.hasPrefix("user:") {
                    target["type"] = "user"
                    target["userId"] = .string(String(name.dropFirst(5)))
                }
            case .socket(let id):
                target = ["type": "socket", "socketId": .string(id), "userId": .optional(targetUserId)]
            }
            var o: JSONObject = [
                "seq": .int(sequence), "event": .string(event), "payload": args.first ?? .null, "args": .array(args),
                "target": .object(target), "except": .optional(except), "recipients": .int(Int64(recipients)),
                "timestampMs": .int(timestampMs),
            ]
            if !droppedSessions.isEmpty {
                o["dropped"] = true
                o["droppedSessions"] = .array(droppedSessions.map { .string($0) })
            }
            return .object(o)
        }
    }

    /// A window of the log.
    public struct Page: Sendable {
        public let entries: [Entry]
        /// The sequence number of the newest recorded event (0 when none yet).
        public let lastSequence: Int64
        /// Events after `since` that were evicted from the ring before they could be read.
        public let missed: Int64
    }

    private struct State {
        var ring: [Entry?]
        var sizes: [Int]
        var head = 0  // next slot to write
        var count = 0
        var bytes = 0
        var lastSequence: Int64 = 0
        /// Drops by a test-mode fault (event name, Engine.IO sid) not yet attached to the record
        /// of their emit, which follows them on the same thread (`noteDropped`). Bounded.
        var pendingDrops: [(event: String, sid: String)] = []
    }

    /// Most drops waiting for their emit's record (older ones are forgotten).
    static let maxPendingDrops = 1024

    public let capacity: Int
    /// Approximate payload bytes kept at most (setting `realtime.eventLogMaxBytes`).
    public let maxBytes: Int
    private let state: LockedValue<State>
    private let clock: any WallClock
    /// Long-polls suspended on the log (`RealtimeEventLog+Waiting.swift`), under their own lock.
    let waitList = LockedValue(WaitList())
    /// Long-polls (`GET /api/test/events?wait=`) suspended at once at most; one more is refused.
    public let maxWaiters: Int

    /// `capacity`: events kept (setting `realtime.eventLogCapacity`); `maxBytes`: their payloads'
    /// approximate size at most. The oldest events are evicted past either bound; one payload
    /// larger than a quarter of `maxBytes` is kept as `{"_truncated": true, "approximateBytes": n}`.
    public init(capacity: Int, maxBytes: Int = 16 << 20, maxWaiters: Int = defaultMaxWaiters, clock: any WallClock = SystemWallClock()) {
        self.capacity = max(1, capacity)
        self.maxWaiters = max(1, maxWaiters)
        self.maxBytes = max(1024, maxBytes)
        self.clock = clock
        state = LockedValue(State(ring: Array(repeating: nil, count: max(1, capacity)), sizes: Array(repeating: 0, count: max(1, capacity))))
    }

    /// Installs this log as `hub`'s emit observer.
    public func observe(_ hub: SocketIOServer) {
        hub.setEmitObserver { [weak hub, self] record in
            var userId: String?
            if case .socket(let id) = record.target { userId = hub?.socket(id: id)?.userID }
            self.record(record, targetUserId: userId)
        }
    }

    public func record(_ r: SocketIOEmitRecord, targetUserId: String? = nil) {
        let now = clock.nowMicroseconds() / 1000
        var args = r.args
        var size = args.reduce(0) { $0 + $1.approximateByteCount }
        if size > maxBytes / 4 {
            args = [.object(["_truncated": true, "approximateBytes": .int(Int64(size))])]
            size = 64
        }
        let entrySize = size
        state.withLock { s in
            // Evict the oldest until the new entry fits both bounds.
            while s.count > 0 && (s.count == capacity || s.bytes + entrySize > maxBytes) {
                let oldest = (s.head - s.count + capacity) % capacity
                s.bytes -= s.sizes[oldest]
                s.ring[oldest] = nil
                s.sizes[oldest] = 0
                s.count -= 1
            }
            s.lastSequence += 1
            var entry = Entry(sequence: s.lastSequence, event: r.event, args: args, target: r.target, except: r.except,
                              targetUserId: targetUserId, recipients: r.recipients, timestampMs: now)
            if !s.pendingDrops.isEmpty {
                entry.droppedSessions = s.pendingDrops.filter { $0.event == r.event }.map(\.sid)
                s.pendingDrops.removeAll { $0.event == r.event }
            }
            s.ring[s.head] = entry
            s.sizes[s.head] = entrySize
            s.bytes += entrySize
            s.head = (s.head + 1) % capacity
            s.count += 1
        }
        resumeWaiters()
    }

    /// A test-mode `drop` fault kept event `event` from session `sid`: the next record of that
    /// event (its emit's, recorded right after the packets were handed out) is marked dropped.
    public func noteDropped(event: String, sid: String) {
        state.withLock { s in
            if s.pendingDrops.count >= Self.maxPendingDrops { s.pendingDrops.removeFirst() }
            s.pendingDrops.append((event, sid))
        }
    }

    /// Approximate payload bytes held now.
    public var heldBytes: Int { state.withLock { $0.bytes } }

    public var lastSequence: Int64 { state.withLock { $0.lastSequence } }

    /// Events with `sequence > since`, oldest first, at most `limit`, optionally only those
    /// named `event` or addressed to room `roomId`.
    public func events(since: Int64, limit: Int, event: String? = nil, roomId: String? = nil) -> Page {
        state.withLock { s in
            let oldest = s.lastSequence - Int64(s.count) + 1
            let missed = max(0, oldest - 1 - since)
            var out: [Entry] = []
            let start = (s.head - s.count + capacity) % capacity
            for i in 0..<s.count where out.count < limit {
                guard let e = s.ring[(start + i) % capacity], e.sequence > since else { continue }
                if let event, e.event != event { continue }
                if let roomId, !Self.concerns(e, roomId: roomId) { continue }
                out.append(e)
            }
            return Page(entries: out, lastSequence: s.lastSequence, missed: missed)
        }
    }

    /// The newest `limit` events named `event` / concerning room `roomId` (when given), oldest
    /// first: where a tail view (the inspector) starts before it follows with `events(since:)`.
    /// `missed` is always 0.
    public func latest(limit: Int, event: String? = nil, roomId: String? = nil) -> Page {
        state.withLock { s in
            var out: [Entry] = []
            let start = (s.head - s.count + capacity) % capacity
            var i = s.count - 1
            while i >= 0 && out.count < limit {
                defer { i -= 1 }
                guard let e = s.ring[(start + i) % capacity] else { continue }
                if let event, e.event != event { continue }
                if let roomId, !Self.concerns(e, roomId: roomId) { continue }
                out.append(e)
            }
            return Page(entries: out.reversed(), lastSequence: s.lastSequence, missed: 0)
        }
    }

    /// Forgets every recorded event; sequence numbers keep growing.
    public func clear() {
        state.withLock { s in
            for i in s.ring.indices { s.ring[i] = nil; s.sizes[i] = 0 }
            s.head = 0
            s.count = 0
            s.bytes = 0
        }
    }

    /// Moves the sequence forward to `sequence` when it is behind (never back), so the next event
    /// is `sequence + 1`: in a cluster every test-mode node's log continues after the same number
    /// once a reset or a fixtures load has aligned them (docs/test-mode.md "Against a cluster").
    /// The numbers skipped were never used; a long-poll waiting on the log checks again.
    public func advance(to sequence: Int64) {
        let moved: Bool = state.withLock { s in
            guard sequence > s.lastSequence else { return false }
            s.lastSequence = sequence
            return true
        }
        if moved { resumeWaiters() }
    }

    /// A room emit to the room, or any emit whose payload names the room (`roomId`).
    static func concerns(_ e: Entry, roomId: String) -> Bool {
        if case .room(let name) = e.target, name == RealtimeConfiguration.roomChannel(roomId) { return true }
        return e.args.first?["roomId"]?.stringValue == roomId
    }
}
