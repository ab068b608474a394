import TSSockets
import TSWebSocket

/// Fault injection (test mode, docs/test-mode.md "Faults"): the hook on the outbound path is
/// `sendPreEncoded`, which every Socket.IO packet goes through (a faulted session is never
/// written directly by a broadcast: `activeWebSocket` is nil for it). Heartbeat packets take
/// their own path (`writeFrameLocked`, the polling queue) and are never delayed, held or dropped.
extension EngineIOSession {
    /// What `sendPreEncoded` does with packets while faults are active (lock held): nil to send
    /// them now, else whether the session took them (queued, dropped or swallowed).
    func faultedSendLocked(_ packets: [EnginePreEncodedPacket], _ f: EngineSessionFaults, into actions: inout Actions) -> Bool? {
        if f.silenced { return true }
        if f.dropRemaining > 0, let first = packets.first, let name = EngineSessionFaults.eventName(first), f.dropEvents.contains(name) {
            f.dropRemaining -= 1
            f.onDrop?(name)
            if f.isIdle { state.faults = nil }
            return true
        }
        if f.delayNanoseconds == 0 && !f.holding && f.queueIsEmpty && !f.flushing { return nil }
        guard f.enqueue(packets, now: clock.now()) else {
            server?.logger.warning("test fault: session \(id) passed realtime.faultMaxBufferedBytes (\(f.maxBufferedBytes) bytes held or delayed); dropped as a slow consumer")
            state.faults = nil
            state.machine.close(reason: EngineCloseReason.slowConsumer, pollReply: nil, into: &actions)
            return false
        }
        scheduleFaultFlushLocked(f)
        return true
    }

    /// Arms the flush of the queue's head on the timer loop (lock held).
    private func scheduleFaultFlushLocked(_ f: EngineSessionFaults) {
        guard !f.flushing, let due = f.nextDue else { return }
        if let at = f.flushAt, at <= due { return }
        f.flushAt = due
        let now = clock.now()
        timerLoop.scheduleTask(in: due > now ? due - now : 0) { [self] in flushFaultQueue(scheduledAt: due) }
    }

    /// Writes the queued packets that are due, in order, through the unfaulted path. Runs on the
    /// timer loop only, so two flushes never interleave; sends made meanwhile queue behind
    /// (`flushing`), so nothing overtakes a packet being flushed.
    func flushFaultQueue(scheduledAt: UInt64? = nil, ignoringDelay: Bool = false) {
        while true {
            let batch: [[EnginePreEncodedPacket]]? = lock.withLock {
                guard !state.machine.isClosed, let f = state.faults else { return nil }
                if let scheduledAt, f.flushAt == scheduledAt { f.flushAt = nil }
                let due = f.takeDue(now: clock.now(), ignoringDelay: ignoringDelay)
                if due.isEmpty {
                    f.flushing = false
                    if f.isIdle { state.faults = nil } else { scheduleFaultFlushLocked(f) }
                    return nil
                }
                f.flushing = true
                return due
            }
            guard let batch else { return }
            for packets in batch { sendPreEncoded(packets, throughFaults: false) }
        }
    }

    /// Applies `fault`; false when the session is closed. `maxBufferedBytes` bounds what
    /// `delay`/`hold` may queue; `onDrop` is told each dropped event's name (with the session's
    /// lock held: leaf locks only).
    public func applyFault(_ fault: EngineFault, maxBufferedBytes: Int, onDrop: (@Sendable (String) -> Void)? = nil) -> Bool {
        let ok: Bool = lock.withLock {
            guard !state.machine.isClosed else { return false }
            let f = state.faults ?? EngineSessionFaults(maxBufferedBytes: maxBufferedBytes)
            f.maxBufferedBytes = maxBufferedBytes
            switch fault {
            case .delay(let ms): f.delayNanoseconds = UInt64(max(0, ms)) * 1_000_000
            case .drop(let events, let count):
                f.dropEvents = events
                f.dropRemaining = max(0, count)
                f.onDrop = onDrop
            case .hold: f.holding = true
            case .release: f.holding = false
            }
            state.faults = f.isIdle ? nil : f
            return true
        }
        // Released packets leave from the timer loop, in order.
        if ok, fault == .release { timerLoop.execute { [self] in flushFaultQueue() } }
        return ok
    }

    /// Removes every fault; packets still held or delayed leave now, in order (on the timer
    /// loop). A silenced session stays silenced: it is dying by its ping timeout.
    public func clearFaults() {
        let flush: Bool = lock.withLock {
            guard let f = state.faults, !f.silenced else { return false }
            f.delayNanoseconds = 0
            f.holding = false
            f.dropRemaining = 0
            f.dropEvents = []
            if f.isIdle { state.faults = nil }
            return true
        }
        if flush { timerLoop.execute { [self] in flushFaultQueue(ignoringDelay: true) } }
    }

    /// The faults active on this session, nil when none.
    public var faultSnapshot: EngineFaultSnapshot? { lock.withLock { state.faults?.snapshot(sid: id) } }

    /// "ping timeout": from now on the session sends nothing (not even pings) and ignores what
    /// arrives, so the client's own timer (Engine.IO v4 "Heartbeat": no ping within
    /// pingInterval + pingTimeout) ends the connection. The server closes the session itself
    /// one pingTimeout after the client must have given up, so it is bounded either way.
    public func silenceUntilPingTimeout() -> Bool {
        let ok: Bool = lock.withLock {
            guard !state.machine.isClosed else { return false }
            let f = state.faults ?? EngineSessionFaults(maxBufferedBytes: 0)
            f.discardQueue()
            f.silenced = true
            state.faults = f
            shared.timers.cancel(self)
            state.machine.timerCancelled()
            return true
        }
        guard ok else { return false }
        let grace = max(.milliseconds(1), configuration.pingInterval) + max(.milliseconds(1), configuration.pingTimeout) * 2
        timerLoop.scheduleTask(in: grace.clockNanoseconds) { [self] in close(reason: EngineCloseReason.pingTimeout) }
        return true
    }

    /// Whether inbound packets are ignored (a silenced session). Lock held.
    var isSilencedLocked: Bool { state.faults?.silenced == true }

    /// "transport close" (`reset` false): the TCP connection ends with a FIN, no Engine.IO
    /// close packet, no WebSocket Close frame. "transport error" (`reset` true): it ends with a
    /// reset (RST). A parked long-poll GET is answered 400 (its connection is not ours to cut
    /// without an answer). The session closes with the matching reason.
    public func dropTransport(reset: Bool) -> Bool {
        perform { actions in
            guard !state.machine.isClosed else { return false }
            state.faults = nil
            state.machine.dropTransport(reset: reset, into: &actions)
            return true
        }
    }
}

extension EngineIOSession {
    /// Removes every fault at once and discards what they held or delayed (before a server
    /// disconnect, whose DISCONNECT must not wait behind them).
    public func discardFaults() {
        lock.withLock {
            guard let f = state.faults, !f.silenced else { return }
            f.discardQueue()
            state.faults = f.flushing ? f : nil
            f.delayNanoseconds = 0
            f.holding = false
            f.dropRemaining = 0
        }
    }
}
