import TSSockets

/// The heartbeat timers of every session of one server, on ONE timer of the timer loop
/// (Engine.IO v4 protocol, "Heartbeat": a ping every `pingInterval`, close `pingTimeout` after
/// it without a pong; also the upgrade deadline and v3's ping deadline).
///
/// A session's timer used to be its own loop task: a closure, a task-table entry and a heap
/// entry per session (~140 bytes). Here a session is linked into one of four lists by the kind
/// of its next deadline (`Kind`); every deadline of one kind is "now + the same constant", so
/// each list is in deadline order when a session is appended at its tail (an insertion walks
/// back from the tail past any later deadline, so the order holds even when two threads arm at
/// nearly the same time). One loop task is armed at the earliest head; when it runs it takes
/// every session whose deadline has passed and calls `timerFired()` on each, exactly as the
/// per-session task did (same deadlines, same clock). Cancelling unlinks the session at once,
/// so a closed session is not kept alive by its timer.
///
/// Lock order: a session's lock, then this lock, then the loop's. `fire` calls sessions only
/// after releasing this lock.
// @unchecked Sendable: `lists`, `armed`, `generation` and every session's `timerLink` are only accessed
// while holding `lock`; `loop` and `clock` are immutable.
final class EngineSessionTimers: @unchecked Sendable {
    /// Which deadline a session waits for (a list each): its next ping (v4), the pong after a
    /// ping (v4), the end of an upgrade, or the next client ping (v3).
    enum Kind: Int8 { case ping = 0, pong = 1, upgrade = 2, clientPing = 3 }

    /// A session's place in a list (stored in the session, guarded by the timers' lock).
    struct Link {
        var next: EngineIOSession?
        unowned(unsafe) var previous: EngineIOSession?
        var deadline: UInt64 = 0
        /// The list it is in (`Kind.rawValue`), -1 when in none.
        var list: Int8 = -1
    }

    private struct List {
        var head: EngineIOSession?
        unowned(unsafe) var tail: EngineIOSession?
    }

    private let lock = Mutex()
    private let loop: EventLoop
    private let clock: any MonotonicClock
    private var lists = [List](repeating: List(), count: 4)
    /// The one loop task armed (for the earliest deadline), if any, and its generation.
    private var armed: (deadline: UInt64, generation: UInt64, handle: ScheduledTaskHandle)?
    private var generation: UInt64 = 0

    init(loop: EventLoop, clock: any MonotonicClock) {
        self.loop = loop
        self.clock = clock
    }

    /// Sets `session`'s timer to `deadline` (replacing the one it had).
    func arm(_ session: EngineIOSession, at deadline: UInt64, kind: Kind) {
        lock.withLock {
            unlinkLocked(session)
            insertLocked(session, at: deadline, list: Int(kind.rawValue))
            if armed.map({ deadline < $0.deadline }) ?? true { armLoopLocked(deadline) }
        }
    }

    /// Removes `session`'s timer, if it has one.
    func cancel(_ session: EngineIOSession) {
        lock.withLock { unlinkLocked(session) }
    }

    /// Number of sessions with a timer (tests).
    var count: Int {
        lock.withLock {
            var n = 0
            for l in lists {
                var s = l.head
                while let c = s { n += 1; s = c.timerLink.next }
            }
            return n
        }
    }

    private func insertLocked(_ s: EngineIOSession, at deadline: UInt64, list k: Int) {
        var after = lists[k].tail
        while let a = after, a.timerLink.deadline > deadline { after = a.timerLink.previous }
        s.timerLink.deadline = deadline
        s.timerLink.list = Int8(k)
        s.timerLink.previous = after
        if let a = after {
            s.timerLink.next = a.timerLink.next
            a.timerLink.next = s
        } else {
            s.timerLink.next = lists[k].head
            lists[k].head = s
        }
        if let n = s.timerLink.next { n.timerLink.previous = s } else { lists[k].tail = s }
    }

    private func unlinkLocked(_ s: EngineIOSession) {
        let k = Int(s.timerLink.list)
        guard k >= 0 else { return }
        let next = s.timerLink.next, previous = s.timerLink.previous
        if let p = previous { p.timerLink.next = next } else { lists[k].head = next }
        if let n = next { n.timerLink.previous = previous } else { lists[k].tail = previous }
        s.timerLink = Link()
    }

    /// Arms the loop task for `deadline`, replacing the one armed (at most one is).
    private func armLoopLocked(_ deadline: UInt64) {
        armed?.handle.cancel()
        generation &+= 1
        let g = generation
        let now = clock.now()
        let handle = loop.scheduleTask(in: deadline > now ? deadline - now : 0) { [self] in fire(g) }
        armed = (deadline, g, handle)
    }

    /// The loop task of generation `g` ran (or one replaced while it was starting: it still
    /// takes what is due, and re-arms only when no task is armed for an earlier time).
    private func fire(_ g: UInt64) {
        let now = clock.now()
        var due: [EngineIOSession] = []
        lock.withLock {
            if armed?.generation == g { armed = nil }
            for k in 0..<lists.count {
                while let h = lists[k].head, h.timerLink.deadline <= now {
                    unlinkLocked(h)
                    due.append(h)
                }
            }
            var earliest: UInt64?
            for l in lists { if let h = l.head { earliest = min(earliest ?? .max, h.timerLink.deadline) } }
            if let earliest, armed.map({ earliest < $0.deadline }) ?? true { armLoopLocked(earliest) }
        }
        for s in due { s.timerFired() }
    }
}
