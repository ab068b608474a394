import Dispatch
import Logging
import TSDomain
import TSJSON
import TSSocketIO
import TSSockets
import TSSync

/// Turns committed domain events into Socket.IO emits (docs/realtime.md): room events to the
/// sockets that joined the room except the originating socket, global events to members (or to
/// everyone), and payloads that depend on the viewer (`hasReacted`, badges) computed per user.
///
/// Order (docs/realtime.md "Order"): `publish` is called by the database's writer thread in
/// commit order; it only appends the event to its room's queue (`RoomEventSequencer`) and starts
/// that room's drain when none runs. One drain per room emits the room's events one after the
/// other, each through the hub's one fan-out path (encoded once per variant), so every socket
/// gets a room's events in commit order; different rooms are delivered concurrently. A
/// `room:join` is an item of the same queue (`enqueueJoin`), placed by its own commit: the batch
/// goes out and the socket joins the room's channel between the events committed before the
/// batch was read and those committed after.
///
/// Reads (docs/realtime.md "Order"): what an event's payloads need from the database (members for
/// global events, who has hearted an element, each viewer's room) is read when the event is
/// published, before it enters its room's queue, by a task of its own; the drain only takes the
/// answer when the event's turn comes. Events of a room are read concurrently and still leave in
/// commit order. A read that only a socket in the room can need (who has hearted the element) is
/// not started while the room has no listener and no `room:join` on its way (`publish`); the
/// drain reads nothing, except in the one race `drain` describes.
public final class RealtimeBroadcaster: DomainEventPublisher, Sendable {
    public let hub: SocketIOServer
    let recipientReads: any RecipientReads
    /// Bounds the recipient reads in flight (`RealtimeConfiguration.maxReadsInFlight`).
    let readPermits: AsyncPermits
    /// A room's members read, shared by the events published before it begins.
    let sharedMemberReads = SharedMemberReads()
    private let configuration: RealtimeConfiguration
    /// Times the gap waits (a missing room number, a fresh room's hold).
    private let clock: any MonotonicClock
    let logger: Logger
    private let queues: LockedValue<Queues>
    /// Where drains run (`runDrains(on:)`): the event loops' executors, so that a drain's writes
    /// to sockets of its loop happen inline, as they did from a request handler on that loop.
    /// Known only once the listener runs; until then drains run on the global pool.
    private let drainExecutors = SetOnce<[any TaskExecutor]>()
    /// Recovery across nodes (RealtimeBroadcaster+Recovery.swift); nil on a node alone.
    public let recovery: ClusterRecovery?

    /// The rooms' queues, and per room the `room:join`s queued or being delivered (their socket not
    /// yet in the room's channel): under one lock, so an event's admission and a join's see each
    /// other (`publish`).
    struct Queues {
        var sequencer: RoomEventSequencer<Work>
        var joining: [String: Int] = [:]
        /// Per-viewer reads never started (nobody could receive the event), and reads the drain
        /// had to do itself (the recovery race of `drain`).
        var readsSkipped: Int64 = 0
        var readsInDrain: Int64 = 0
    }

    /// One item of a room's queue.
    enum Work: Sendable {
        case event(DomainEvent, Prefetch)
        case join(JoinDelivery)
        /// Finished when the drain gets there: everything queued before it has been emitted.
        case marker(DeliveryTicket)
    }

    /// A `room:join` whose elements were read in commit order with the room's events: they hold
    /// every event of the room numbered up to `afterSeq`.
    struct JoinDelivery: Sendable {
        let socket: SocketIOSocket
        let roomId: String
        let elements: [Element]
        let afterSeq: Int64?
        let ticket: DeliveryTicket
    }

    /// Where an item goes in its room's queue.
    private enum Place {
        /// Under the room number it carries.
        case numbered(Int64)
        /// Right after that number (a join's read).
        case after(Int64)
        /// After everything queued so far.
        case last
    }

    /// - Parameters:
    ///   - reads: what the payloads need from the database, read before an event enters its drain.
    ///   - clock: times the gap waits (`realtime.gapWait`).
    ///   - recovery: recovery across nodes (several nodes, recovery on), else nil.
    public init(hub: SocketIOServer, reads: any RecipientReads, configuration: RealtimeConfiguration, clock: any MonotonicClock,
                recovery: ClusterRecovery?, logger: Logger) {
        self.hub = hub
        recipientReads = reads
        readPermits = AsyncPermits(max(1, configuration.maxReadsInFlight))
        self.configuration = configuration
        self.clock = clock
        self.recovery = recovery
        self.logger = logger
        let gap = configuration.gapWait.clockNanoseconds
        queues = LockedValue(Queues(sequencer: RoomEventSequencer(maxPendingPerRoom: configuration.maxQueuedEventsPerRoom, gapWaitNanoseconds: gap,
                                                                  freshHoldNanoseconds: configuration.holdFreshRooms ? gap : 0,
                                                                  maxRooms: configuration.maxTrackedRooms,
                                                                  idleForgetNanoseconds: max(1, configuration.forgetIdleRoomsAfter.clockNanoseconds))))
    }

    /// On the writer thread, in commit order (or from the cross-node bridge, in its receive
    /// order): queued under its room number (`DomainEvent.seq`), so it leaves after the room's
    /// events numbered before it, whichever node committed them; never waits for the broadcast.
    ///
    /// A read only the room's sockets need starts here when, after the event is queued, the room
    /// has a listener, or under the queue's lock when a `room:join` of the room is queued or being
    /// delivered; a join queued later starts the reads of the events waiting before it is
    /// (`enqueue`). So a socket that joins receives the event with its read done, or has the
    /// change in its join batch: its join's socket enters the channel (`deliver`) before the join
    /// stops counting in `joining`, so when this event was queued either the join was counted, or
    /// its socket was already in the channel and is seen by the look that follows, or the join
    /// was queued after the event and found it waiting (or the event had already left, before the
    /// join's batch, whose read holds it). A socket that enters a room by connection state
    /// recovery starts the reads of the events waiting there (`startQueuedReads`); the drain
    /// covers the rest of that race.
    public func publish(_ event: DomainEvent) {
        let (reads, roomOnly) = prefetch(event)
        if !roomOnly { reads.start() }
        enqueue(.event(event, reads), room: event.roomId, at: event.seq.map(Place.numbered) ?? .last)
        if roomOnly, !reads.started, roomHasListener(event) { reads.start() }
    }

    /// Starts the reads of the events waiting in the rooms of these channels (a socket came into
    /// them by connection state recovery, outside a `room:join`).
    public func startQueuedReads(channels: some Sequence<String>) {
        let prefix = RealtimeConfiguration.roomChannel("")
        let rooms = channels.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        guard !rooms.isEmpty else { return }
        let waiting = queues.withLock { q in rooms.flatMap { q.sequencer.pendingItems(room: $0) } }
        for case .event(_, let reads) in waiting { reads.start() }
    }

    /// On the writer thread, from the commit of the join's read: the socket gets `elements` and
    /// then the room's events committed after that read, each once. The socket leaves the room's
    /// channel now, so events committed before the read (they are in `elements`) and still
    /// queued do not reach it again when it re-joins a room it was in.
    func enqueueJoin(_ join: JoinDelivery) {
        join.socket.leave(RealtimeConfiguration.roomChannel(join.roomId))
        enqueue(.join(join), room: join.roomId, at: join.afterSeq.map(Place.after) ?? .last)
    }

    /// Returns once every event queued before the call has been emitted. Test-target mode calls it
    /// before answering a write (docs/test-mode.md): the answer then finds its events in
    /// `GET /api/test/events`. Production answers never wait for a broadcast.
    public func flush() async {
        for room in queues.withLock({ $0.sequencer.activeRooms }) {
            let ticket = DeliveryTicket()
            enqueue(.marker(ticket), room: room, at: .last)
            _ = await ticket.wait()
        }
    }

    /// Runs each room's drain on one of `executors` (chosen by room, so one room's drains keep to
    /// one loop), instead of the global pool: a broadcast then writes to the sockets of that loop
    /// without a hop. Called once, when the event loops exist.
    public func runDrains(on executors: [any TaskExecutor]) { drainExecutors.set(executors) }

    /// Returns true once each executor of `runDrains(on:)` (an event loop) has run every job
    /// queued to it before the call: what was written from another thread to a connection of that
    /// loop (queued by `EventLoop.execute`) is then in the connection's outbound buffer, before
    /// anything a drain writes there from now on. False when one did not get there within
    /// `timeout` (stuck, or stopped). Drains on the global pool write to every connection through
    /// its loop's queue, in order: nothing to wait for.
    func loopsCaughtUp(within timeout: Duration) async -> Bool {
        for executor in drainExecutors.value ?? [] {
            let caughtUp = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                // Resumed once: by a job queued behind everything already on the executor, or by
                // the timeout, whichever takes it first.
                let waiter = LockedValue<CheckedContinuation<Bool, Never>?>(c)
                let deadline = Task {
                    try? await Task.sleep(for: timeout)
                    waiter.withLock { w in defer { w = nil }; return w }?.resume(returning: false)
                }
                Task(executorPreference: executor) {
                    waiter.withLock { w in defer { w = nil }; return w }?.resume(returning: true)
                    deadline.cancel()  // no sleeper left behind per restore and loop
                }
            }
            guard caughtUp else { return false }
        }
        return true
    }

    /// Global events go to the members' channels (read per event) rather than to every socket.
    var globalEventsToMembers: Bool { if case .members = configuration.globalEvents { return true } else { return false } }

    /// Reads only a room's listener needs that were never started, and those its drain did itself.
    public var readCounters: (skipped: Int64, inDrain: Int64) { queues.withLock { ($0.readsSkipped, $0.readsInDrain) } }

    /// Events waiting in `roomId`'s queue whose reads have started (for tests).
    func startedReads(roomId: String) -> Int {
        queues.withLock { q in
            q.sequencer.pendingItems(room: roomId).reduce(0) { n, work in
                if case .event(_, let reads) = work, reads.started { return n + 1 }
                return n
            }
        }
    }

    /// Events waiting in a room's queue (for tests and the inspector).
    public func queuedEvents(roomId: String) -> Int { queues.withLock { $0.sequencer.pending(room: roomId) } }

    /// Numbers given up after `realtime.gapWait` (their events lost, or late), events dropped for
    /// arriving after that, joins placed after events that had already left, and the rooms whose
    /// order state is kept: for `/metrics`.
    public var orderCounters: (skipped: Int64, late: Int64, joinsLate: Int64, roomsTracked: Int) {
        queues.withLock { ($0.sequencer.skipped, $0.sequencer.deliveredLate, $0.sequencer.placedLate, $0.sequencer.roomCount) }
    }

    private func enqueue(_ work: Work, room: String, at place: Place) {
        let (admission, late, lateEvent, drainID, startReads): (RoomEventSequencer<Work>.Admission, Bool, Int64?, UInt64, [Prefetch]) = queues.withLock { q in
            let lateBefore = q.sequencer.placedLate
            let lateEventsBefore = q.sequencer.deliveredLate
            let admission: RoomEventSequencer<Work>.Admission
            switch place {
            case .numbered(let seq): admission = q.sequencer.accept(work, seq: seq, room: room)
            case .after(let seq): admission = q.sequencer.accept(work, after: seq, room: room)
            case .last: admission = q.sequencer.append(work, room: room).admission
            }
            var startReads: [Prefetch] = []
            switch work {
            case .event(_, let reads) where !reads.started && q.joining[room, default: 0] > 0:
                startReads = [reads]
            case .join where admission == .startDrain || admission == .queued:
                // Its socket will be in the room's channel when the events waiting here leave.
                q.joining[room, default: 0] += 1
                for case .event(_, let reads) in q.sequencer.pendingItems(room: room) where !reads.started { startReads.append(reads) }
            default:
                break
            }
            return (admission, q.sequencer.placedLate != lateBefore, q.sequencer.deliveredLate != lateEventsBefore ? q.sequencer.deliveredLate : nil,
                    q.sequencer.drainID(room: room), startReads)
        }
        for reads in startReads { reads.start() }
        if let n = lateEvent, n == 1 || n % 1000 == 0 {
            logger.warning("realtime: an event of room \(room) arrived after its number was given up (a delay between nodes longer than realtime.gapWait); delivered now, out of the room's order (\(n) so far)")
        }
        if late {
            logger.warning("realtime: a room:join in room \(room) was placed after events numbered above its read (they arrived from another node before its commit was handed on); its socket may miss them until it joins again")
        }
        switch admission {
        case .startDrain:
            let executors = drainExecutors.value ?? []
            if executors.isEmpty {
                Task { await self.drain(room: room, id: drainID) }
            } else {
                var h = Hasher()
                h.combine(room)
                Task(executorPreference: executors[Int(UInt(bitPattern: h.finalize()) % UInt(executors.count))]) { await self.drain(room: room, id: drainID) }
            }
        case .queued:
            break
        case .duplicate:
            // A number already delivered (given-up ones are delivered late above): a copy.
            logger.debug("realtime: an event of room \(room) numbered below what was already delivered was dropped as a copy")
        case .full:
            logger.error("realtime: room \(room) already has \(configuration.maxQueuedEventsPerRoom) events waiting for delivery; one was dropped (clients resync on their next room:join)")
            if case .join(let j) = work { j.ticket.finish(false) }
            if case .marker(let t) = work { t.finish(false) }
        }
    }

    /// The room's one drain: delivers its queue in order until it is empty (or, asleep on a
    /// missing number, until an arrival replaced it with a new drain, `id` no longer current).
    private func drain(room: String, id: UInt64) async {
        while true {
            let now = clock.now()
            let (step, gaveUp) = queues.withLock { q in
                let before = q.sequencer.skipped
                let step = q.sequencer.next(room: room, now: now, drain: id)
                return (step, q.sequencer.skipped - before)
            }
            if gaveUp > 0 {
                logger.error("realtime: room \(room): \(gaveUp) event number(s) did not arrive within realtime.gapWait (lost on the way from the node that committed them); delivery goes on without them, and the room's clients get them back by joining again")
            }
            // The event's reads were started when it was published (or by a join queued before
            // it); taken before the recovery gate, so a restore never waits for the database.
            var prefetched: RecipientData?
            if case .item(_, .event(_, let reads)) = step { prefetched = await reads.startedValue }
            if case .item = step, let recovery { await recovery.gate.enter() }
            defer { if case .item = step, let recovery { recovery.gate.leave() } }
            if case .item(_, .event(let event, let reads)) = step, prefetched == nil {
                // Never started: nobody could receive it when it was queued. Whoever is in the
                // room now gets it, and only they: nobody, unless a socket came in by connection
                // state recovery since (a restore or a same-node recovery that raced
                // `startQueuedReads`); only then is the read done here, in the drain.
                let audience = roomAudience(event)
                queues.withLock { q in if audience.isEmpty { q.readsSkipped += 1 } else { q.readsInDrain += 1 } }
                if audience.isEmpty {
                    prefetched = RecipientData(audience: [])
                } else {
                    logger.debug("realtime: room \(event.roomId): \(event.name) read in its drain (a socket came into the room by connection state recovery after it was published)")
                    prefetched = await reads.value
                }
            }
            switch step {
            case .idle:
                return
            case .item(_, .event(let event, _)):
                recovery?.keep(event)
                var journal: ((ClosedRange<UInt64>?) -> Void)?
                if let recovery, let seq = event.seq {
                    // Written before its packets leave: a client's offset is then almost always journalled.
                    journal = { [hub] offsets in
                        let now = hub.recoveryCounter(namespace: "/")
                        recovery.journal(.event, roomId: event.roomId, seq: seq, offsets: offsets ?? now...now, sid: nil)
                    }
                }
                let leftOut = recovery?.alreadyDelivered(roomId: event.roomId, seq: event.seq) ?? []
                do { try broadcast(event, reads: prefetched ?? .none, journal: journal, leftOut: leftOut) } catch {
                    logger.error("broadcast of \(event.name) in room \(event.roomId) failed: \(error)")
                }
            case .item(_, .join(let join)):
                deliver(join)
            case .item(_, .marker(let ticket)):
                ticket.finish(true)
            case .waitGap(let until):
                // A missing number (or a fresh room's hold, several nodes): bounded by realtime.gapWait.
                try? await Task.sleep(nanoseconds: until &- now)
            }
        }
    }

    /// A join of `room` is over (its socket is in the channel): it no longer holds the room's reads started.
    private func joined(room: String) {
        queues.withLock { q in
            let n = q.joining[room, default: 0] - 1
            q.joining[room] = n > 0 ? n : nil
        }
    }

    /// The join's batch to its socket, then the socket into the room's channel: no event of the
    /// room can leave in between (this runs in the room's drain).
    private func deliver(_ join: JoinDelivery) {
        let jsons = join.elements.map(\.json)
        let to = SocketIOTarget.socket(join.socket.id, namespace: join.socket.namespace)
        // Through the hub (not socket.emit) so the emit is recorded for /api/test/events and the inspector.
        var emissions = [RealtimeEvents.elementsBatch.emission(ElementsBatch(roomId: join.roomId, encoded: jsons), to)]
        if configuration.legacyJoinEvents {
            emissions += jsons.map { RealtimeEvents.elementCreated.emission(ElementPayload(encoded: $0), to) }
        }
        hub.emitCountingOffsets(emissions) { [hub, recovery] offsets in
            guard let recovery, join.socket.pid != nil else { return }
            // The session's place in the room, for its recovery on another node.
            let now = hub.recoveryCounter(namespace: "/")
            recovery.journal(.join, roomId: join.roomId, seq: join.afterSeq ?? 0, offsets: offsets ?? now...now, sid: join.socket.id)
        }
        join.socket.join(RealtimeConfiguration.roomChannel(join.roomId))
        joined(room: join.roomId)
        join.ticket.finish(true)
    }
}
