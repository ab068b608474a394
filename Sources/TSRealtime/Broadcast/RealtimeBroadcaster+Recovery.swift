import Foundation
import TSDomain
import TSJSON
import TSSocketIO
import TSSync

/// Connection state recovery across nodes (docs/realtime-cluster.md, "Connection state recovery
/// across nodes"), the broadcaster's part: every room event this node processes is kept in a
/// bounded ring (for sessions of other nodes to replay) and journalled (for this node's own
/// sessions to be recovered elsewhere), and a recovered session is put in place while every room
/// drain stands still between two items, so that its replay and the live events that follow
/// reach it in each room's order, each once.
public final class ClusterRecovery: Sendable {
    let gate = DrainGate()
    private let ring: LockedValue<RecoveryRing>
    /// Writes one journal entry (its `number` is the writer's to give). The writer (Redis's
    /// session mirror) restores sessions through the broadcaster this object is part of, so it
    /// exists only after it: it registers itself here once, before the server starts.
    public let journalWriter = SetOnce<@Sendable (RecoveryJournalEntry) -> Void>()
    private let windowMs: Int64
    /// Wall time: ring items and journal entries are compared with other nodes' journals.
    private let clock: any WallClock
    /// Per room, the recovered sockets that already have the room's events up to a number this
    /// node has not processed yet (they came from the other node first), until when.
    private let delivered = LockedValue<[String: [String: (seq: Int64, untilMs: Int64)]]>([:])

    public init(maxEvents: Int, window: Duration, clock: any WallClock) {
        windowMs = Int64(window.clockNanoseconds / 1_000_000)
        self.clock = clock
        ring = LockedValue(RecoveryRing(maxCount: maxEvents, maxAgeMs: windowMs, startMs: clock.nowMicroseconds() / 1000))
    }

    private func nowMs() -> Int64 { clock.nowMicroseconds() / 1000 }

    func keep(_ event: DomainEvent) {
        let now = nowMs()
        ring.withLock { $0.append(event, ms: now) }
    }

    func journal(_ kind: RecoveryJournalEntry.Kind, roomId: String, seq: Int64, offsets: ClosedRange<UInt64>, sid: String?) {
        journalWriter.value?(RecoveryJournalEntry(number: 0, first: offsets.lowerBound, counter: offsets.upperBound, roomId: roomId, seq: seq, kind: kind,
                                   sid: sid, ms: nowMs()))
    }

    var ringSnapshot: (items: [RecoveryRingItem], sinceMs: Int64) { ring.withLock { ($0.snapshot, $0.sinceMs) } }

    /// `sid` has the events of each room up to its number: when they arrive here, it is left out.
    /// Forgotten after the recovery window (then this node never got them: nothing to leave out).
    func hold(sid: String, delivered rooms: [String: Int64]) {
        let now = nowMs()
        delivered.withLock { d in
            for (room, seq) in rooms { d[room, default: [:]][sid] = (seq, now + windowMs) }
            for room in Array(d.keys) {
                d[room] = d[room]?.filter { $0.value.untilMs > now }
                if d[room]?.isEmpty == true { d[room] = nil }
            }
        }
    }

    /// The recovered sockets an event of `roomId` numbered `seq` must not reach again.
    func alreadyDelivered(roomId: String, seq: Int64?) -> [String] {
        guard let seq else { return [] }
        return delivered.withLock { d in
            guard let held = d[roomId] else { return [] }
            var out: [String] = []
            for (sid, h) in held where seq <= h.seq {
                out.append(sid)
                if seq == h.seq { d[roomId]?[sid] = nil }
            }
            for (sid, h) in held where seq > h.seq { d[roomId]?[sid] = nil }
            if d[roomId]?.isEmpty == true { d[roomId] = nil }
            return out
        }
    }

    /// Events kept for other nodes' sessions (for /metrics).
    public var keptEvents: Int { ring.withLock { $0.count } }
}

/// Lets the room drains run, or holds them all between two items: `close` waits (bounded) until
/// no drain is inside an item; while closed, a drain that reaches its next item waits for `open`.
final class DrainGate: Sendable {
    private struct State {
        var closers = 0
        var running = 0
        var entering: [CheckedContinuation<Void, Never>] = []
        var idle: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = LockedValue(State())

    func enter() async {
        if state.withLock({ s in s.closers == 0 ? { s.running += 1; return true }() : false }) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { s in
                if s.closers == 0 {
                    s.running += 1
                    return true
                }
                s.entering.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    func leave() {
        let idle: [CheckedContinuation<Bool, Never>] = state.withLock { s in
            s.running -= 1
            guard s.running == 0 else { return [] }
            let waiting = Array(s.idle.values)
            s.idle = [:]
            return waiting
        }
        for c in idle { c.resume(returning: true) }
    }

    /// Holds the drains; true once none is inside an item, false (and not held) after `timeout`.
    func close(timeout: Duration) async -> Bool {
        let id: UInt64? = state.withLock { s in
            s.closers += 1
            if s.running == 0 { return nil }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        let idle = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let now: Bool = state.withLock { s in
                if s.running == 0 { return true }
                s.idle[id] = c
                return false
            }
            if now { return c.resume(returning: true) }
            Task {
                try? await Task.sleep(for: timeout)
                if let c = self.state.withLock({ $0.idle.removeValue(forKey: id) }) { c.resume(returning: false) }
            }
        }
        if !idle { open() }
        return idle
    }

    func open() {
        let resume: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.closers -= 1
            guard s.closers == 0 else { return [] }
            let waiting = s.entering
            s.entering = []
            s.running += waiting.count
            return waiting
        }
        for c in resume { c.resume() }
    }
}

/// Where one broadcast's emits go: the hub, or (a replay) only the emissions that reach one
/// socket; remembers the last recovery offset they got.
final class Emitter {
    let hub: SocketIOServer
    let only: SocketIOSocket?
    private let onlyRooms: Set<String>
    /// Journals the broadcast with the offsets its emits got, before they leave (once).
    private var journal: ((ClosedRange<UInt64>?) -> Void)?

    /// Sockets left out of every emission (recovered ones that already have the event).
    private let leftOut: [String]

    init(hub: SocketIOServer, only: SocketIOSocket?, journal: ((ClosedRange<UInt64>?) -> Void)? = nil, leftOut: [String] = []) {
        self.hub = hub
        self.leftOut = leftOut
        self.only = only
        self.journal = journal
        onlyRooms = only?.rooms ?? []
    }

    /// The broadcast is over: journalled even when it emitted nothing.
    func finish() { journalOnce(nil) }

    private func journalOnce(_ offsets: ClosedRange<UInt64>?) {
        let j = journal
        journal = nil
        j?(offsets)
    }

    /// A room event: to the room without the origin, or to the replayed socket when it is in the room.
    func room(_ name: String, _ args: [JSONValue], _ room: String, except: String?) -> SocketIOEmission {
        guard let only else { return SocketIOEmission(name, args, .room(room, except: except)) }
        let reaches = only.id != except && onlyRooms.contains(room)
        return SocketIOEmission(name, args, .sockets(reaches ? [only.id] : [], room: room, except: except))
    }

    /// The sockets of `room` (only the replayed one, when it is in it).
    func members(of room: String) -> [SocketIOSocket] {
        guard let only else { return hub.sockets(inRoom: room) }
        return onlyRooms.contains(room) ? [only] : []
    }

    func emit(_ emissions: [SocketIOEmission]) {
        var list = emissions
        if !leftOut.isEmpty {
            list = list.map { e in
                SocketIOEmission(e.event, e.args, attachments: e.attachments, leftOut.reduce(e.target) { $0.except(socket: $1) })
            }
        }
        if only != nil {
            // A replay sends nothing to nobody (no log entry, no offset).
            list = emissions.filter { if case .sockets(let ids, _) = $0.target.recipients { return !ids.isEmpty } else { return true } }
        }
        guard !list.isEmpty else { return }
        hub.emitCountingOffsets(list, beforeSending: journal == nil ? nil : { [self] in journalOnce($0) })
    }
}

extension RealtimeBroadcaster {
    /// Why a restore did not happen.
    public enum RestoreFailure: Error, CustomStringConvertible {
        case plan(RecoveryPlan.Failure)
        case busy
        case loopBehind
        case off
        case taken

        public var description: String {
            switch self {
            case .plan(let f): return f.rawValue
            case .busy: return "the room drains did not stand still in time"
            case .loopBehind: return "the socket's event loop did not take its replay in in time"
            case .off: return "recovery across nodes is off on this node"
            case .taken: return "its socket id is connected again, or the connection went away"
            }
        }
    }

    /// Puts a session of another node in place: with every drain standing still, chooses the
    /// events it missed (`RecoveryPlan`), installs the socket (rooms, CONNECT reply) and replays
    /// them to it, personalised as they were for every recipient; the drains go on after that.
    public func restore(_ record: SocketIOSessionRecord, journal: [RecoveryJournalEntry], counter: UInt64, within timeout: Duration,
                        install: @Sendable (SocketIOSessionRecord) -> SocketIOSocket?) async -> Result<(SocketIOSocket, Int), RestoreFailure> {
        guard let recovery else { return .failure(.off) }
        guard await recovery.gate.close(timeout: timeout) else { return .failure(.busy) }
        defer { recovery.gate.open() }
        let (ring, since) = recovery.ringSnapshot
        let missed: [DomainEvent]
        switch RecoveryPlan.missed(journal: journal, counter: counter, sid: record.sid, ring: ring, ringSinceMs: since) {
        case .failure(let f): return .failure(.plan(f))
        case .success(let plan):
            missed = plan.missed
            recovery.hold(sid: record.sid, delivered: plan.delivered)
        }
        guard let socket = install(record) else { return .failure(.taken) }
        // Its rooms' queued events now have a listener; started while the drains stand still.
        startQueuedReads(channels: record.rooms)
        for event in missed {
            // Read here, outside every room's drain (they stand still), and only what reaches
            // the replay's one recipient: who has hearted the element only when it is in the room.
            let (eventReads, roomOnly) = prefetch(event)
            let reaches = !roomOnly || (socket.id != event.originSocketId && socket.rooms.contains(RealtimeConfiguration.roomChannel(event.roomId)))
            let reads = reaches ? await eventReads.value : .none
            do { try broadcast(event, reads: reads, only: socket) } catch {
                // Its replay would have a hole: the client starts over (a fresh session on its next connect).
                logger.error("recovery of socket \(socket.id): replaying \(event.name) of room \(event.roomId) failed (\(error)); disconnecting it")
                socket.disconnect(closeTransport: true)
                return .failure(.taken)
            }
        }
        // The CONNECT reply and the replay were written from this task, off the socket's loop:
        // they are queued on that loop (`EventLoop.execute`), not yet in the connection. A drain
        // of the socket's loop whose job was queued there before them (a drain started, or
        // resumed from its read, while the drains stood still) would, once the gate is open,
        // write the room's next event inline, ahead of them. The drains go on only once every
        // loop has run what was queued to it before this point (bounded: a loop stuck that long,
        // or stopped, gives the client a fresh session rather than its replay out of order).
        guard await loopsCaughtUp(within: timeout) else {
            logger.error("recovery of socket \(socket.id): its event loop did not take the replay in within \(timeout); disconnecting it")
            socket.disconnect(closeTransport: true)
            return .failure(.loopBehind)
        }
        return .success((socket, missed.count))
    }
}
