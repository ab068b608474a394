/// How a `Connection` goes from open to closed, as a value: every event returns what the
/// connection must do, and the connection keeps no closing flags of its own (the shape of
/// postgres-nio's `ConnectionStateMachine`). Pure: no I/O, no clock; tested event by event in
/// `ConnectionCloseStateMachineTests`.
///
///     open ──closeGracefully, output pending──▶ flushingThenClose ──outputFlushed──▶ lingering
///       │  └─closeGracefully, nothing pending──────────────────────────────────────▶ lingering
///       └──closeNow / reset / peerClosed / readFailed──▶ closed ◀──lingerExpired / peerClosed / readFailed──┘
///
/// A graceful close flushes what is queued, shuts down the sending side, then drains (and
/// discards) the peer's input for the linger time, so the peer reads our last bytes instead of
/// a reset. The first reason given is the one reported: a later error while closing keeps it.
struct ConnectionCloseStateMachine: Equatable {
    enum State: Equatable {
        /// Reading and writing.
        case open
        /// Closing gracefully: no new writes; what was queued is still sent.
        case flushingThenClose
        /// Sending side shut down; the peer's input is drained until EOF or the linger timer.
        case lingering
        /// Descriptor closed (final).
        case closed
    }

    enum Action: Equatable {
        /// Nothing to do.
        case none
        /// Keep sending the queued bytes; `outputFlushed()` follows once they are out.
        case awaitFlush
        /// Shut down the sending side, arm the linger timer, run the output-finished callbacks.
        case startLinger
        /// Close the descriptor now, reporting `reason` (deregister, drop the queue, tell the handler).
        case close(CloseReason)
        /// As `close`, with a TCP reset instead of a FIN (`SO_LINGER` 0 first).
        case resetThenClose(CloseReason)
    }

    private(set) var state: State = .open
    /// The reason that will be (or was) reported.
    private(set) var reason: CloseReason = .local("closed")

    // MARK: queries

    /// New writes are queued (and transforms and handlers see input) only while open.
    var isOpen: Bool { state == .open }
    /// Queued bytes are still sent (flushes, EPOLLOUT, batched sends, slow-consumer deadlines).
    var sendsPending: Bool { state == .open || state == .flushingThenClose }
    var isClosed: Bool { state == .closed }
    /// Nothing more will be sent: closed, or the sending side is shut down.
    var outputFinished: Bool { state == .closed || state == .lingering }

    /// Whether to poll for input: while open and not paused, and while lingering (to drain it).
    func wantsRead(readingPaused: Bool) -> Bool {
        state == .lingering || (state == .open && !readingPaused)
    }

    /// Whether the read loop keeps reading: not when closed, nor when open but paused; while
    /// closing it drains (and discards) whatever arrives.
    func keepsReading(readingPaused: Bool) -> Bool {
        switch state {
        case .closed: return false
        case .open: return !readingPaused
        case .flushingThenClose, .lingering: return true
        }
    }

    // MARK: events

    /// A graceful close was asked for, with `outputPending` bytes still queued.
    mutating func closeGracefully(_ reason: CloseReason, outputPending: Bool) -> Action {
        guard state == .open else { return .none }
        self.reason = reason
        if outputPending {
            state = .flushingThenClose
            return .awaitFlush
        }
        state = .lingering
        return .startLinger
    }

    /// Every queued byte was handed to the kernel.
    mutating func outputFlushed() -> Action {
        guard state == .flushingThenClose else { return .none }
        state = .lingering
        return .startLinger
    }

    /// An immediate close (a local decision or a failed write): the reason counts only if the
    /// connection was still open.
    mutating func closeNow(_ reason: CloseReason) -> Action {
        switch state {
        case .closed: return .none
        case .open: self.reason = reason
        case .flushingThenClose, .lingering: break
        }
        state = .closed
        return .close(self.reason)
    }

    /// A close by TCP reset (how a connection dies on a network error, as the peer sees it):
    /// as `closeNow`, also while closing gracefully (the reason given first is kept).
    mutating func reset(_ reason: CloseReason) -> Action {
        guard case .close(let r) = closeNow(reason) else { return .none }
        return .resetThenClose(r)
    }

    /// The peer closed its side (EOF): the end of a graceful close, or a peer close.
    mutating func peerClosed() -> Action { closeNow(.peerClosed) }

    /// A read failed: the end of a linger (whatever the error), or an error close.
    mutating func readFailed(_ error: SocketError) -> Action { closeNow(.error(error)) }

    /// The linger timer fired: close with the graceful close's reason.
    mutating func lingerExpired() -> Action {
        guard state == .lingering else { return .none }
        return closeNow(reason)
    }
}
