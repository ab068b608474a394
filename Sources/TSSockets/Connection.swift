import Logging

/// A non-blocking TCP connection owned by one `EventLoop`.
///
/// Reads are delivered to `handler`; writes go through an outbound queue of messages
/// (`ConnectionOutboundQueue`). Writes are coalesced: `write` only queues, and the loop flushes
/// every written-to connection once at the end of its iteration (after events, timers and
/// tasks), so several messages produced in one iteration — e.g. two broadcasts to the same
/// socket, or pipelined responses — leave in one send(2). A large message is sent straight from
/// its own storage, in pieces as the socket becomes writable (EPOLLOUT interest is registered
/// only while data is pending); a message can carry a completion callback (`WriteOutcome`).
///
/// Slow consumers: `maxOutboundBytes` bounds the *backlog* — bytes queued behind the message in
/// progress (one larger message may wait behind it) — never the size of one answer. A write
/// that would pass it closes the connection with `.slowConsumer`; so does a peer that takes no
/// byte for `outboundStallTimeout`, or takes the pending bytes slower than
/// `minOutboundBytesPerSecond` overall (a total deadline). Each drop is logged with its numbers.
// @unchecked Sendable: every mutable property except `openFlag` is only accessed on `loop`'s thread
// (the loop-confined methods assert `loop.inEventLoop`; the thread-safe ones, `send` and `close`,
// hop to the loop first). `openFlag` is an atomic so `isOpen` can be read anywhere.
public final class Connection: @unchecked Sendable {
    public let id: UInt64
    public let loop: EventLoop
    public let remoteAddress: String
    let socket: Socket

    private var _handler: ConnectionHandler = NoOpConnectionHandler()
    /// TLS seam (see `ConnectionTransform`): set on the loop before the handler. Loop only.
    public var transform: ConnectionTransform?
    /// The handler receiving this connection's events. Replace it on the loop (e.g. protocol upgrade).
    public var handler: ConnectionHandler {
        get { _handler }
        set {
            assert(loop.inEventLoop, "Connection.handler must be set on the connection's loop")
            _handler = newValue
        }
    }

    /// Backlog bytes (queued behind the message being sent, see `ConnectionOutboundQueue`)
    /// above which the connection is closed with `.slowConsumer`. Loop only.
    public var maxOutboundBytes: Int {
        get { outbound.maxBacklogBytes }
        set { outbound.maxBacklogBytes = newValue }
    }
    /// With bytes pending, the longest the peer may take none of them. Loop only.
    public var outboundStallTimeout: UInt64 {
        get { outbound.stallTimeout }
        set { outbound.stallTimeout = newValue }
    }
    /// The slowest overall rate at which the peer must take pending bytes (0: no total deadline). Loop only.
    public var minOutboundBytesPerSecond: Int {
        get { outbound.minBytesPerSecond }
        set { outbound.minBytesPerSecond = newValue }
    }
    /// How long a gracefully closing connection keeps draining the peer's input after shutting
    /// down its sending side, before the descriptor is closed (avoids RST clobbering the response).
    public var lingerNanoseconds: UInt64 = 2_000_000_000

    /// Open, closing gracefully, lingering or closed, with the reason to report: every closing
    /// event goes through it and the connection does what it answers (`perform`).
    private var closing = ConnectionCloseStateMachine()
    private var closeReason: CloseReason { closing.reason }
    private var registration: UInt64 = 0
    private var registered = false
    private var readingPaused = false
    private var writeInterest = false
    /// The interest currently registered with the poller (to skip redundant poller calls).
    private var registeredEvents: PollerEvents = []
    /// True while this connection is in its loop's end-of-iteration flush list.
    var flushScheduled = false
    private var outbound: ConnectionOutboundQueue
    private var outboundTimer: ScheduledTaskHandle?
    private var outboundTimerDeadline: UInt64?
    private var lingerTimer: ScheduledTaskHandle?
    private let openFlag = Atomic<Bool>(true)
    /// Called once after the final close, after the handler (used by the listener for accounting).
    var onClosed: (@Sendable (Connection) -> Void)?
    // One optional closure each, not an array: nearly every connection has exactly one (an
    // array of closures costs an array and a reabstraction thunk per entry, ~80 bytes per
    // connection); a second callback is chained after the first (`Connection.chain`).
    private var closeCallbacks: ((Connection) -> Void)?
    private var outputFinishedCallbacks: ((Connection) -> Void)?

    /// Runs `callback` on the loop once the connection has finally closed (after the handler's
    /// `connectionDidClose`); at once if it already has. Lets owners track connections without
    /// weak references (a weak reference gives the object a side table, which makes every
    /// retain/release of it take the slow path). Loop only.
    public func whenClosed(_ callback: @escaping (Connection) -> Void) {
        assert(loop.inEventLoop)
        if closing.isClosed { callback(self) } else { closeCallbacks = Self.chain(closeCallbacks, callback) }
    }

    /// Runs `callback` on the loop once nothing more will be sent: the connection closed, or
    /// it flushed everything and shut down its sending side while closing gracefully (lingering).
    /// At once if that is already so. Loop only.
    public func whenOutputFinished(_ callback: @escaping (Connection) -> Void) {
        assert(loop.inEventLoop)
        if closing.outputFinished { callback(self) } else { outputFinishedCallbacks = Self.chain(outputFinishedCallbacks, callback) }
    }

    /// `first`, then `next` (registration order).
    private static func chain(_ first: ((Connection) -> Void)?, _ next: @escaping (Connection) -> Void) -> (Connection) -> Void {
        guard let first else { return next }
        return { c in
            first(c)
            next(c)
        }
    }

    init(id: UInt64, socket: Socket, loop: EventLoop, remoteAddress: String, maxOutboundBytes: Int) {
        self.id = id
        self.socket = socket
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.outbound = ConnectionOutboundQueue(maxBacklogBytes: maxOutboundBytes)
    }

    /// The logger of this connection's loop (for lines that explain a close).
    public var logger: Logger { loop.logger }

    /// True until a close (immediate or graceful) has been requested.
    public var isOpen: Bool { openFlag.load(ordering: .acquiring) }

    /// Bytes written but not yet accepted by the kernel. Loop only.
    public var outboundBufferedBytes: Int { outbound.pendingBytes }

    /// Registers with the loop's epoll set. Loop only.
    func activate() throws {
        assert(loop.inEventLoop)
        registration = try loop.register(fd: socket.fd, events: .readable, self)
        registeredEvents = .readable
        registered = true
    }

    // MARK: writing

    /// Queues `bytes` as one message; the loop sends it at the end of the current iteration,
    /// together with anything else written to this connection meanwhile. Loop only.
    /// Ignored once the connection is closing.
    public func write(_ bytes: [UInt8]) {
        write(bytes, [], onDone: nil)
    }

    /// Queues one message made of `first` then `second` (e.g. a response head and its body, so
    /// a large body is sent from its own storage without a copy). `onDone` runs on the loop
    /// once the last byte was handed to the kernel, or with `.dropped` when the connection
    /// closes first (also when it is already closing: then at once). Loop only.
    public func write(_ first: [UInt8], _ second: [UInt8], onDone: ((WriteOutcome) -> Void)?) {
        assert(loop.inEventLoop, "Connection.write must be called on the connection's loop")
        if let transform, closing.isOpen {
            let bytes = transform.transformOutbound(self, first, second)
            if bytes.isEmpty && closing.isOpen { onDone?(.delivered); return }  // held by the transform, sent by it later
            return enqueue(bytes, [], onDone: onDone)  // (closed by the transform: reported dropped)
        }
        enqueue(first, second, onDone: onDone)
    }

    /// Queues bytes as they are, past the transform (its own handshake/alert bytes). Loop only.
    public func writeBypassingTransform(_ bytes: [UInt8]) {
        enqueue(bytes, [], onDone: nil)
    }

    /// Gives the handler bytes a transform decoded (while open). Loop only.
    public func deliverInbound(_ bytes: UnsafeRawBufferPointer) {
        if closing.isOpen { handler.connectionDidRead(self, bytes) }
    }

    private func enqueue(_ first: [UInt8], _ second: [UInt8], onDone: ((WriteOutcome) -> Void)?) {
        guard closing.isOpen else {
            onDone?(.dropped(reason: closeReason, sentBytes: 0, totalBytes: first.count + second.count))
            return
        }
        if first.isEmpty && second.isEmpty {
            onDone?(.delivered)
            return
        }
        let backlogBefore = outbound.backlogBytes
        let pendingBefore = outbound.pendingBytes
        guard outbound.append(first, second, onDone: onDone) else {
            let n = first.count + second.count
            loop.logger.notice("connection dropped as a slow consumer: a \(n)-byte write would take its backlog to \(backlogBefore + n) bytes (bound \(outbound.maxBacklogBytes)), \(pendingBefore) bytes still unsent",
                               metadata: ["connection": .stringConvertible(id), "remote": .string(remoteAddress)])
            onDone?(.dropped(reason: .slowConsumer, sentBytes: 0, totalBytes: n))
            closeNow(.slowConsumer)
            return
        }
        if !writeInterest && !flushScheduled {
            flushScheduled = true
            loop.scheduleFlush(self)
        }
    }

    /// Called by the loop at the end of an iteration for connections written to in it.
    func flushScheduledWrites() {
        flushScheduled = false
        guard closing.sendsPending, !writeInterest else { return }
        flush()
    }

    /// Thread-safe `write`: hops to the loop if needed.
    public func send(_ bytes: [UInt8]) {
        if loop.inEventLoop {
            write(bytes)
        } else {
            loop.execute { self.write(bytes) }
        }
    }

    /// Messages whose head part has at least this many unsent bytes are sent straight from
    /// their storage; smaller ones are gathered (with what follows) into one send(2).
    private static let directSendThreshold = 32 * 1024

    private func flush() {
        let wasWaiting = writeInterest
        var completed: [(WriteOutcome) -> Void] = []
        defer { for cb in completed { cb(.delivered) } }
        while !outbound.isEmpty {
            let result: WriteResult
            do {
                if outbound.headChunkCount >= Self.directSendThreshold || outbound.messageCount == 1 && outbound.headChunkCount == outbound.headRemaining {
                    result = try outbound.withHeadChunk { try socket.send($0) }
                } else {
                    let scratch = loop.readBuffer
                    let n = outbound.gather(into: scratch)
                    result = try socket.send(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                }
            } catch let error as SocketError {
                closeNow(.error(error))
                return
            } catch {
                closeNow(.local("\(error)"))
                return
            }
            loop.counters.plainSends &+= 1
            switch result {
            case .bytes(let n):
                completed += outbound.consume(n, now: loop.clock.now())
            case .wouldBlock:
                outbound.blocked(now: loop.clock.now())
                armOutboundTimer()
                updateInterest()  // wait for EPOLLOUT
                return
            }
        }
        cancelOutboundTimer()
        if writeInterest { updateInterest() }
        if closing.isOpen {
            if wasWaiting { handler.connectionWritabilityChanged(self) }
        } else {
            perform(closing.outputFlushed())
        }
    }

    // MARK: batched sends (io_uring; the loop's `SendBatcher` drives these)

    /// What `stageBatchedSend` did with this connection's scheduled flush.
    enum BatchStaging {
        /// Nothing to send now (closed, or waiting for EPOLLOUT): the flush is done.
        case skip
        /// Flush it with `flushScheduledWrites` (send(2)): empty queue, or more than a batch slot holds.
        case plain
        /// Its pending bytes do not fit in what is left of the staging area: submit, then retry.
        case noRoom
        /// All `n` pending bytes were copied into the staging area, ready for one send.
        case staged(Int)
    }

    /// For the end-of-iteration flush through the loop's ring: copies every pending byte into
    /// `staging` (at most `maxBytes`), so one IORING_OP_SEND can carry them. Loop only.
    func stageBatchedSend(into staging: UnsafeMutableRawBufferPointer, maxBytes: Int) -> BatchStaging {
        guard closing.sendsPending, !writeInterest else {
            flushScheduled = false
            return .skip
        }
        let pending = outbound.pendingBytes
        if pending == 0 || pending > maxBytes { return .plain }
        if pending > staging.count { return .noRoom }
        flushScheduled = false
        return .staged(outbound.gather(into: staging))
    }

    /// The result of the batched send of `staged` bytes (bytes taken, or -errno), handled as
    /// `flush` handles send(2)'s: a short send or EAGAIN keeps the rest queued and waits for
    /// EPOLLOUT (with the slow-consumer deadlines running), EPIPE/ECONNRESET and every other
    /// error close the connection. Ignored when the connection closed since it was staged (by
    /// handler code run for an earlier completion of the same batch). Loop only.
    func completeBatchedSend(_ result: Int32, staged: Int, now: UInt64) {
        guard closing.sendsPending else { return }
        if result < 0 {
            switch -result {
            case EAGAIN, EWOULDBLOCK:
                loop.counters.ringShortSends &+= 1
                outbound.blocked(now: now)
                armOutboundTimer()
                updateInterest()  // wait for EPOLLOUT
            case EINTR:
                flush()
            default:
                closeNow(.error(SocketError(syscall: "send", errno: -result)))
            }
            return
        }
        let completed = outbound.consume(Int(result), now: now)
        defer { for cb in completed { cb(.delivered) } }
        if Int(result) < staged {
            loop.counters.ringShortSends &+= 1
            outbound.blocked(now: now)  // the socket buffer is full: the rest waits for EPOLLOUT
            armOutboundTimer()
            updateInterest()
            return
        }
        if !outbound.isEmpty {
            // Written to again since it was staged (handler code of an earlier completion): that
            // write scheduled its own flush; without one, flush now.
            if !flushScheduled && !writeInterest { flush() }
            return
        }
        cancelOutboundTimer()
        if writeInterest { updateInterest() }
        perform(closing.outputFlushed())
    }

    /// Keeps one timer at the outbound queue's next deadline while bytes are pending.
    private func armOutboundTimer() {
        guard let deadline = outbound.nextDeadline else { return cancelOutboundTimer() }
        if outboundTimerDeadline == deadline, outboundTimer != nil { return }
        if let due = outboundTimerDeadline, outboundTimer != nil, due <= deadline { return }  // fires first, re-arms then
        outboundTimer?.cancel()
        outboundTimerDeadline = deadline
        let now = loop.clock.now()
        // Strong capture (no weak reference, see `whenClosed`): cancelled when the queue drains
        // or the connection closes, which releases the closure.
        outboundTimer = loop.scheduleTask(in: deadline > now ? deadline - now : 0) { self.outboundTimerFired() }
    }

    private func cancelOutboundTimer() {
        outboundTimer?.cancel()
        outboundTimer = nil
        outboundTimerDeadline = nil
    }

    private func outboundTimerFired() {
        outboundTimer = nil
        outboundTimerDeadline = nil
        guard closing.sendsPending else { return }
        let now = loop.clock.now()
        if let expiry = outbound.expiry(now: now) {
            let why: String
            switch expiry {
            case .stalled:
                why = "the peer took no byte for \(outbound.stallTimeout / 1_000_000) ms"
            case .tooSlow:
                why = "the peer read slower than \(outbound.minBytesPerSecond) bytes/s overall"
            }
            loop.logger.notice("connection dropped as a slow consumer: \(why); \(outbound.pendingBytes) bytes still unsent",
                               metadata: ["connection": .stringConvertible(id), "remote": .string(remoteAddress)])
            closeNow(.slowConsumer)
            return
        }
        armOutboundTimer()
    }

    // MARK: reading

    /// Stops delivering reads (back-pressure). Loop only.
    public func pauseReading() {
        assert(loop.inEventLoop)
        guard !readingPaused else { return }
        readingPaused = true
        updateInterest()
    }

    /// Resumes delivering reads. Loop only.
    public func resumeReading() {
        assert(loop.inEventLoop)
        guard readingPaused else { return }
        readingPaused = false
        updateInterest()
    }

    private func updateInterest() {
        guard registered, !closing.isClosed else { return }
        var events: PollerEvents = []
        let wantRead = closing.wantsRead(readingPaused: readingPaused)
        if wantRead { events.insert(.readable) }
        let wantWrite = outboundBufferedBytes > 0
        if wantWrite { events.insert(.writable) }
        writeInterest = wantWrite
        if events == registeredEvents { return }
        registeredEvents = events
        do {
            try loop.modify(fd: socket.fd, registration: registration, events: events)
        } catch let error as SocketError {
            closeNow(.error(error))
        } catch {}
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        var reads = 0
        while reads < 16 {
            guard closing.keepsReading(readingPaused: readingPaused) else { return }
            reads += 1
            let result: ReadResult
            do {
                result = try socket.read(into: buffer)
            } catch let error as SocketError {
                perform(closing.readFailed(error))
                return
            } catch { return }
            switch result {
            case .bytes(let n):
                if closing.isOpen {
                    if let transform {
                        transform.connectionDidReceive(self, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    } else {
                        handler.connectionDidRead(self, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    }
                }
                // Otherwise discard: we are closing and only drain the peer's input.
                if n < buffer.count { return }
            case .wouldBlock:
                return
            case .eof:
                perform(closing.peerClosed())
                return
            }
        }
    }

    // MARK: closing

    /// Closes immediately, dropping unsent data. Idempotent, thread-safe.
    public func close(_ reason: CloseReason) {
        if loop.inEventLoop {
            closeNow(reason)
        } else {
            loop.execute { self.closeNow(reason) }
        }
    }

    /// Closes immediately with a TCP reset (RST: `SO_LINGER` 0, then close), dropping unsent
    /// data: how a connection dies on a network error, as the peer sees it. Idempotent,
    /// thread-safe.
    public func reset(_ reason: CloseReason) {
        guard loop.inEventLoop else {
            loop.execute { self.reset(reason) }
            return
        }
        perform(closing.reset(reason))
    }

    /// Flushes pending output, shuts down the sending side, drains the peer's input for up to
    /// `lingerNanoseconds` (so the peer reads our last response instead of a reset), then closes.
    /// Further writes are ignored. Idempotent, thread-safe.
    public func closeGracefully(_ reason: CloseReason) {
        guard loop.inEventLoop else {
            loop.execute { self.closeGracefully(reason) }
            return
        }
        guard closing.isOpen else { return }
        if let tail = transform?.connectionWillCloseGracefully(self), !tail.isEmpty { enqueue(tail, [], onDone: nil) }
        guard closing.isOpen else { return }
        openFlag.store(false, ordering: .releasing)
        perform(closing.closeGracefully(reason, outputPending: outboundBufferedBytes > 0))
    }

    /// Does what the close state machine answered.
    private func perform(_ action: ConnectionCloseStateMachine.Action) {
        switch action {
        case .none:
            break
        case .awaitFlush:
            // Pending bytes go out with the scheduled flush (or on EPOLLOUT), then the linger starts.
            if !flushScheduled { updateInterest() }
        case .startLinger:
            socket.shutdownWrite()
            updateInterest()
            // Strong capture (no weak reference, see `whenClosed`): the timer is cancelled in
            // `finalClose`, which releases the closure and with it the connection.
            lingerTimer = loop.scheduleTask(in: lingerNanoseconds) { self.perform(self.closing.lingerExpired()) }
            runOutputFinishedCallbacks()
        case .close:
            finalClose()
        case .resetThenClose:
            socket.setResetOnClose()
            finalClose()
        }
    }

    private func closeNow(_ reason: CloseReason) {
        perform(closing.closeNow(reason))
    }

    /// Releases everything once the state machine has reached `closed`.
    private func finalClose() {
        openFlag.store(false, ordering: .releasing)
        lingerTimer?.cancel()
        lingerTimer = nil
        if registered {
            loop.deregister(fd: socket.fd, registration: registration)
            registered = false
        }
        socket.close()
        cancelOutboundTimer()
        let dropped = outbound.dropAll(reason: closeReason)
        for (cb, outcome) in dropped { cb(outcome) }
        let h = _handler
        _handler = NoOpConnectionHandler()  // break handler <-> connection cycles
        transform = nil
        h.connectionDidClose(self, reason: closeReason)
        let cb = onClosed
        onClosed = nil
        cb?(self)
        let callbacks = closeCallbacks
        closeCallbacks = nil
        callbacks?(self)
        runOutputFinishedCallbacks()
    }

    private func runOutputFinishedCallbacks() {
        guard let callbacks = outputFinishedCallbacks else { return }
        outputFinishedCallbacks = nil
        callbacks(self)
    }
}

extension Connection: EventLoopSelectable {
    func handleEvents(_ events: PollerEvents) {
        if !events.isDisjoint(with: [.readable, .hangup, .error]) {
            readAvailable()
        }
        if !closing.isClosed, events.contains(.writable) {
            flush()
        }
        if !closing.isClosed, events.contains(.error) {
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &err, &len)
            closeNow(err != 0 ? .error(SocketError(syscall: "getsockopt(SO_ERROR)", errno: err)) : .peerClosed)
        }
    }
}

extension Connection: CustomStringConvertible {
    public var description: String { "Connection(\(id), \(remoteAddress))" }
}
