import TSSockets

/// One HTTP/1.1 connection's serving logic (RFC 9112 §9), as a value: every event (bytes read, a
/// response ready, a response written or drained, a timer tick, server shutdown, the close)
/// returns what the connection must do, and `HTTPConnectionHandler` keeps no flags of its own —
/// the shape of `ConnectionCloseStateMachine` and postgres-nio's `ConnectionStateMachine`. It owns
/// the request parser and the timeout bookkeeping. Pure: no I/O, no clock (times come with the
/// events); tested event by event with byte fixtures in `HTTPConnectionStateMachineTests`.
///
///     reading ──request complete──▶ awaitingResponse ──response ready──▶ (write)
///        ▲                              │                     ├─ keep-alive, little unsent ─▶ reading
///        │                              │                     ├─ keep-alive, much unsent ─▶ awaitingDrain ─drained─▶ reading
///        │                              │                     ├─ Connection: close / shutdown ─▶ closing
///        │                              │                     └─ 101 ─▶ upgraded (final)
///        └─ bad bytes, timeout, shutdown while idle ───────────────────────────▶ closing ─closed─▶ closed
///
/// One request is served at a time; pipelined requests stay in the parser until the previous
/// response was handed over (RFC 9112 §9.3.2: responses in request order).
struct HTTPConnectionStateMachine {
    enum State: Equatable {
        /// No request being served: the parser's progress says whether one is arriving.
        case reading
        /// The responder runs for the request last returned by `nextStep`.
        case awaitingResponse
        /// A response was written with more than `drainLowWater` bytes unsent: the next pipelined
        /// request waits until it is delivered (a large answer streams at the client's pace, and
        /// the outbound backlog never holds two of them).
        case awaitingDrain
        /// A close was asked of the connection; `closed` follows.
        case closing
        /// Handed to the protocol of a 101 (final: this machine is done with the connection).
        case upgraded
        /// Closed, for this reason (final).
        case closed(CloseReason)
    }

    /// What to do with the buffered input (`nextStep`), asked until `.readMore`.
    enum Step {
        /// Nothing complete is buffered, or a request is being served: wait for more bytes.
        case readMore
        /// Write `HTTP/1.1 100 Continue` (RFC 9110 §10.1.1) and ask again.
        case writeContinue
        /// Run the responder for this request; `responseReady` follows.
        case dispatch(HTTPRequestHead, body: [UInt8])
        /// Shutting down: answer 503 with `Retry-After` (RFC 9110 §15.6.4) instead of running the
        /// responder; `responseReady` follows (the answer closes the connection).
        case refuseShuttingDown(HTTPRequestHead, body: [UInt8])
        /// Malformed input or over a limit: answer the error with `Connection: close`, then close
        /// gracefully (the parser is dead).
        case reject(HTTPParseError)
    }

    /// What to do with a response the responder returned (`responseReady`).
    enum ResponseAction: Equatable {
        /// The connection closed meanwhile: nothing is written; the response was lost for `reason`.
        case drop(CloseReason)
        /// Shutdown asked for no answer (a parked poll): close now without writing.
        case closeWithoutAnswer
        /// Write the 101 head, then hand the connection and the bytes already read past the
        /// request to the upgrade.
        case upgrade(leftover: [UInt8])
        /// Write the response with this `Connection` semantics, then call `responseWritten`.
        case write(keepAlive: Bool)
    }

    /// What follows a written or delivered response.
    enum AfterResponse: Equatable {
        /// Close gracefully (flush, then FIN) for this reason.
        case closeGracefully(CloseReason)
        /// Wait for `responseDelivered`.
        case awaitDrain
        /// Serve what is buffered (`nextStep`); resume reading first when it had been paused.
        case serveNext(resumeReading: Bool)
        /// Nothing (the connection is no longer this machine's to serve).
        case none
    }

    /// A timer tick's verdict (`timerFired`).
    enum TimerAction: Equatable {
        /// Check again after the tick interval.
        case rearm
        /// Stop ticking (closing, closed or upgraded).
        case stop
        /// A request head took longer than `headerReadTimeout`: close now.
        case closeHeaderReadTimeout
        /// Idle longer than `idleTimeout`: close gracefully.
        case closeIdleTimeout
        /// The body did not arrive within `bodyReadTimeout`: answer 408 (RFC 9110 §15.5.9) and
        /// close gracefully.
        case requestTimeout
    }

    /// How to close on shutdown (`shutdown`, `responseDelivered`, …).
    enum ShutdownAction: Equatable {
        case none
        /// Nothing unsent: close now (a FIN; lingering would only wait for keep-alive clients
        /// that never close).
        case close
        /// Bytes still unsent: flush them, then close.
        case closeGracefully
    }

    private(set) var state: State = .reading
    private(set) var parser: HTTPParser
    private(set) var timeouts: HTTPConnectionTimeouts
    /// Server shutdown began: no new request is served; the connection closes once idle.
    private(set) var shuttingDown = false
    /// Reading was paused because too much arrived while a request was being served.
    private(set) var readPaused = false
    /// Buffered bytes above which reading pauses while a request is served: one maximal request
    /// ahead, no more.
    let pauseReadingAbove: Int
    /// Unsent bytes above which the next pipelined request waits for the response to drain.
    let drainLowWater: Int
    /// The serving loop (`nextStep` until `.readMore`) is running further up the stack: a
    /// response completed inline inside it must not start a nested one (a long pipeline of small
    /// requests would recurse once per request).
    private var serving = false

    init(limits: HTTPParserLimits, timeouts: HTTPConnectionTimeouts, drainLowWater: Int) {
        parser = HTTPParser(limits: limits)
        self.timeouts = timeouts
        self.drainLowWater = drainLowWater
        pauseReadingAbove = limits.maxBodyBytes + limits.maxHeaderBytes + limits.maxRequestLineBytes
    }

    /// Requests are being served (not closing, closed or upgraded).
    var isServing: Bool {
        switch state {
        case .reading, .awaitingResponse, .awaitingDrain: return true
        case .closing, .upgraded, .closed: return false
        }
    }

    /// A request is being served or its response drained.
    private var requestUnderWay: Bool { state == .awaitingResponse || state == .awaitingDrain }

    private mutating func refreshTimeouts(now: UInt64) {
        timeouts.update(now: now, progress: parser.progress, inFlight: requestUnderWay, bytesArrived: false)
    }

    // MARK: input

    /// Bytes arrived: buffered in the parser. Serve them (`beginServing`, `nextStep`), then call
    /// `readCompleted`.
    mutating func bytesRead(_ bytes: UnsafeRawBufferPointer) {
        guard isServing else { return }
        parser.feed(bytes)
    }

    /// The same, from an array (tests, fixtures).
    mutating func bytesRead(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytesRead($0) }
    }

    /// After a read was served: records the timeout phase, and returns true when reading must
    /// pause (back-pressure while a handler runs).
    mutating func readCompleted(now: UInt64) -> Bool {
        refreshTimeouts(now: now)
        guard requestUnderWay, !readPaused, parser.bufferedBytes > pauseReadingAbove else { return false }
        readPaused = true
        return true
    }

    /// Enters the serving loop; false when it already runs further up the stack (its caller
    /// serves what follows).
    mutating func beginServing() -> Bool {
        if serving { return false }
        serving = true
        return true
    }

    mutating func endServing() { serving = false }

    /// The next thing to do with buffered input.
    mutating func nextStep(now: UInt64) -> Step {
        while state == .reading {
            guard let event = parser.next() else { return .readMore }
            switch event {
            case .expectContinue:
                // Shutting down: the request will be refused, so the client is not invited to
                // send its body (RFC 9110 §10.1.1 allows answering the request instead).
                if !shuttingDown { return .writeContinue }
            case .request(let head, let body, _):
                state = .awaitingResponse
                refreshTimeouts(now: now)
                return shuttingDown ? .refuseShuttingDown(head, body: body) : .dispatch(head, body: body)
            case .error(let error):
                state = .closing
                return .reject(error)
            }
        }
        return .readMore
    }

    // MARK: responses

    /// The responder answered the request being served. `connectionOpen`: whether the connection
    /// is still open (it may have been closed meanwhile by the peer or a write deadline).
    mutating func responseReady(keepAliveRequested: Bool, closesWithoutAnswer: Bool, isUpgrade: Bool,
                                connectionOpen: Bool) -> ResponseAction {
        guard state == .awaitingResponse, connectionOpen else {
            if case .closed(let reason) = state { return .drop(reason) }
            return .drop(.local("closing"))
        }
        if closesWithoutAnswer {
            state = .closing
            return .closeWithoutAnswer
        }
        if isUpgrade {
            state = .upgraded
            return .upgrade(leftover: parser.takeRemainingBytes())
        }
        return .write(keepAlive: keepAliveRequested && !shuttingDown && !parser.hasFailed)
    }

    /// The response of `.write(keepAlive:)` was handed to the connection, which holds
    /// `outboundBufferedBytes` unsent.
    mutating func responseWritten(keepAlive: Bool, outboundBufferedBytes: Int, now: UInt64) -> AfterResponse {
        guard state == .awaitingResponse else { return .none }
        if !keepAlive {
            state = .closing
            return .closeGracefully(shuttingDown ? .serverShutdown : .local("Connection: close"))
        }
        if outboundBufferedBytes > drainLowWater {
            state = .awaitingDrain
            refreshTimeouts(now: now)
            return .awaitDrain
        }
        return continueReading()
    }

    /// A response was delivered to the kernel in full (its write's completion).
    mutating func responseDelivered() -> AfterResponse {
        guard state == .awaitingDrain else { return .none }
        return continueReading()
    }

    private mutating func continueReading() -> AfterResponse {
        state = .reading
        let resume = readPaused
        readPaused = false
        return .serveNext(resumeReading: resume)
    }

    /// After serving what followed a response: shutdown closes an idle connection; the timeout
    /// phase is recorded.
    mutating func servedAfterResponse(outboundBufferedBytes: Int, now: UInt64) -> ShutdownAction {
        let action = shuttingDown ? closeIfIdle(outboundBufferedBytes: outboundBufferedBytes) : .none
        if isServing { refreshTimeouts(now: now) }
        return action
    }

    // MARK: timers, shutdown, close

    /// The timeout tick.
    mutating func timerFired(now: UInt64) -> TimerAction {
        guard isServing else { return .stop }
        switch timeouts.decision(now: now) {
        case .keepOpen: return .rearm
        case .closeHeaderReadTimeout:
            state = .closing
            return .closeHeaderReadTimeout
        case .closeIdleTimeout:
            state = .closing
            return .closeIdleTimeout
        case .closeBodyReadTimeout:
            state = .closing
            return .requestTimeout
        }
    }

    /// Server shutdown began: close now if idle; otherwise the current or next response closes.
    mutating func shutdown(outboundBufferedBytes: Int) -> ShutdownAction {
        shuttingDown = true
        return closeIfIdle(outboundBufferedBytes: outboundBufferedBytes)
    }

    /// Also while closing: a connection lingering after its last answer is closed at once, as
    /// nothing more will be sent on it.
    private mutating func closeIfIdle(outboundBufferedBytes: Int) -> ShutdownAction {
        guard state == .reading || state == .closing, parser.progress == .idle else { return .none }
        state = .closing
        return outboundBufferedBytes == 0 ? .close : .closeGracefully
    }

    /// The connection closed (peer half-close or reset, an error, a write deadline, or the end of
    /// our own close). Returns whether it was still this machine's (not upgraded): the server's
    /// connection count is told only then.
    mutating func closed(_ reason: CloseReason) -> Bool {
        switch state {
        case .upgraded, .closed: return false
        case .reading, .awaitingResponse, .awaitingDrain, .closing:
            state = .closed(reason)
            return true
        }
    }
}
