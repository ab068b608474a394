import TSSockets

/// Fault injection (test mode, docs/test-mode.md "Faults"), from outside the session: the faults
/// are an `EngineOutboundStage` installed on the session, which every Socket.IO packet then goes
/// through (a session with a stage is never written directly by a broadcast: `activeWebSocket`
/// is nil for it). Heartbeat packets are written by the session's state machine and never pass
/// the stage: they are never delayed, held or dropped.
extension EngineSessionFaults {
    private enum Admission {
        case pass
        case taken(scheduleFlushAt: UInt64?)
        case overflow
    }

    /// What the session's layer above sent while these faults are installed.
    func send(_ packets: [EnginePreEncodedPacket], through session: EngineIOSession) -> Bool {
        let now = session.clock.now()
        let admission: Admission = lock.withLock {
            if silenced { return .taken(scheduleFlushAt: nil) }
            if dropRemaining > 0, let first = packets.first, let name = Self.eventName(first), dropEvents.contains(name) {
                dropRemaining -= 1
                onDrop?(name)
                return .taken(scheduleFlushAt: nil)
            }
            if delayNanoseconds == 0 && !holding && queueIsEmpty && !flushing { return .pass }
            guard enqueue(packets, now: now) else { return .overflow }
            return .taken(scheduleFlushAt: flushToScheduleLocked())
        }
        switch admission {
        case .pass:
            return session.sendDirect(packets)
        case .taken(let at):
            if let at { session.scheduleFaultFlush(self, at: at) }
            session.removeFaultsIfIdle(self)
            return true
        case .overflow:
            session.server?.logger.warning("test fault: session \(session.id) passed realtime.faultMaxBufferedBytes (\(maxBufferedBytes) bytes held or delayed); dropped as a slow consumer")
            session.close(reason: EngineCloseReason.slowConsumer)
            return false
        }
    }

    /// The deadline to schedule a flush of the queue's head for, if one is needed (lock held).
    func flushToScheduleLocked() -> UInt64? {
        guard !flushing, let due = nextDue else { return nil }
        if let at = flushAt, at <= due { return nil }
        flushAt = due
        return due
    }

    /// Takes what may leave now (lock held): nil when nothing is due (flushing ends).
    func takeDueLocked(scheduledAt: UInt64?, now: UInt64, ignoringDelay: Bool) -> (batch: [[EnginePreEncodedPacket]]?, reschedule: UInt64?) {
        if let scheduledAt, flushAt == scheduledAt { flushAt = nil }
        let due = takeDue(now: now, ignoringDelay: ignoringDelay)
        if due.isEmpty {
            flushing = false
            return (nil, isIdle ? nil : flushToScheduleLocked())
        }
        flushing = true
        return (due, nil)
    }
}

extension EngineIOSession {
    /// The faults installed on this session, if any (lock held).
    private var faultsLocked: EngineSessionFaults? { state.outboundStage as? EngineSessionFaults }

    /// Arms the flush of `faults`' queue head on the timer loop.
    func scheduleFaultFlush(_ faults: EngineSessionFaults, at due: UInt64) {
        let now = clock.now()
        timerLoop.scheduleTask(in: due > now ? due - now : 0) { [self] in flushFaultQueue(faults, scheduledAt: due) }
    }

    /// Uninstalls `faults` once they have nothing left to do (the session goes back to the
    /// direct path).
    func removeFaultsIfIdle(_ faults: EngineSessionFaults) {
        lock.withLock {
            guard state.outboundStage === faults, faults.lock.withLock({ faults.isIdle }) else { return }
            state.outboundStage = nil
        }
    }

    /// Writes the queued packets that are due, in order, past the stage. Runs on the timer loop
    /// only, so two flushes never interleave; sends made meanwhile queue behind (`flushing`), so
    /// nothing overtakes a packet being flushed.
    func flushFaultQueue(_ faults: EngineSessionFaults, scheduledAt: UInt64? = nil, ignoringDelay: Bool = false) {
        while true {
            let installed = lock.withLock { !state.machine.isClosed && state.outboundStage === faults }
            guard installed else { return }
            let now = clock.now()
            let (batch, reschedule) = faults.lock.withLock {
                faults.takeDueLocked(scheduledAt: scheduledAt, now: now, ignoringDelay: ignoringDelay)
            }
            guard let batch else {
                if let reschedule { scheduleFaultFlush(faults, at: reschedule) }
                removeFaultsIfIdle(faults)
                return
            }
            for packets in batch { sendDirect(packets) }
        }
    }

    /// The faults installed on this session, installed now when there are none (lock held).
    private func installedFaultsLocked(maxBufferedBytes: Int) -> EngineSessionFaults {
        if let f = faultsLocked { return f }
        let f = EngineSessionFaults(maxBufferedBytes: maxBufferedBytes)
        state.outboundStage = f
        return f
    }

    /// Applies `fault`; false when the session is closed. `maxBufferedBytes` bounds what
    /// `delay`/`hold` may queue; `onDrop` is told each dropped event's name (with the faults'
    /// lock held: leaf locks only).
    public func applyFault(_ fault: EngineFault, maxBufferedBytes: Int, onDrop: (@Sendable (String) -> Void)? = nil) -> Bool {
        let released: EngineSessionFaults?? = lock.withLock {
            guard !state.machine.isClosed else { return nil }
            let f = installedFaultsLocked(maxBufferedBytes: maxBufferedBytes)
            let idle: Bool = f.lock.withLock {
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
                return f.isIdle
            }
            if idle { state.outboundStage = nil }
            return .some(fault == .release ? f : nil)
        }
        guard let released else { return false }
        // Released packets leave from the timer loop, in order.
        if let f = released { timerLoop.execute { [self] in flushFaultQueue(f) } }
        return true
    }

    /// Removes every fault; packets still held or delayed leave now, in order (on the timer
    /// loop). A silenced session stays silenced: it is dying by its ping timeout.
    public func clearFaults() {
        let flush: EngineSessionFaults? = lock.withLock {
            guard let f = faultsLocked else { return nil }
            let (silenced, idle): (Bool, Bool) = f.lock.withLock {
                guard !f.silenced else { return (true, false) }
                f.delayNanoseconds = 0
                f.holding = false
                f.dropRemaining = 0
                f.dropEvents = []
                return (false, f.isIdle)
            }
            if silenced { return nil }
            if idle { state.outboundStage = nil }
            return f
        }
        if let f = flush { timerLoop.execute { [self] in flushFaultQueue(f, ignoringDelay: true) } }
    }

    /// The faults active on this session, nil when none.
    public var faultSnapshot: EngineFaultSnapshot? {
        lock.withLock { faultsLocked.map { f in f.lock.withLock { f.snapshot(sid: id) } } }
    }

    /// "ping timeout": from now on the session sends nothing (not even pings) and ignores what
    /// arrives on its WebSocket, so the client's own timer (Engine.IO v4 "Heartbeat": no ping
    /// within pingInterval + pingTimeout) ends the connection. The server closes the session
    /// itself one pingTimeout after the client must have given up, so it is bounded either way.
    public func silenceUntilPingTimeout() -> Bool {
        let ok: Bool = lock.withLock {
            guard !state.machine.isClosed else { return false }
            let f = installedFaultsLocked(maxBufferedBytes: 0)
            f.lock.withLock {
                f.discardQueue()
                f.silenced = true
            }
            state.machine.mute()
            return true
        }
        guard ok else { return false }
        shared.timers.cancel(self)
        let grace = max(.milliseconds(1), configuration.pingInterval) + max(.milliseconds(1), configuration.pingTimeout) * 2
        timerLoop.scheduleTask(in: grace.clockNanoseconds) { [self] in close(reason: EngineCloseReason.pingTimeout) }
        return true
    }

    /// "transport close" (`reset` false): the TCP connection ends with a FIN, no Engine.IO
    /// close packet, no WebSocket Close frame. "transport error" (`reset` true): it ends with a
    /// reset (RST). A parked long-poll GET is answered 400 (its connection is not ours to cut
    /// without an answer). The session closes with the matching reason.
    public func dropTransport(reset: Bool) -> Bool {
        perform { actions in
            guard !state.machine.isClosed else { return false }
            state.machine.dropTransport(reset: reset, into: &actions)
            return true
        }
    }

    /// Removes every fault at once and discards what they held or delayed (before a server
    /// disconnect, whose DISCONNECT must not wait behind them).
    public func discardFaults() {
        lock.withLock {
            guard let f = faultsLocked else { return }
            let remove: Bool = f.lock.withLock {
                guard !f.silenced else { return false }
                f.discardQueue()
                f.delayNanoseconds = 0
                f.holding = false
                f.dropRemaining = 0
                return !f.flushing
            }
            if remove { state.outboundStage = nil }
        }
    }
}
