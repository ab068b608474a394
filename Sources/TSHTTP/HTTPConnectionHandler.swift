import Logging
import TSSockets

/// Serves HTTP/1.1 on one connection (RFC 9112 §9): parses requests, runs the responder for one
/// request at a time, writes responses in request order, and enforces the timeouts.
///
/// All mutable state belongs to `connection.loop` (`EventLoopBound`, checked on every access).
/// The only cross-thread step is the handler Task, which hands its response back with
/// `loop.executeOrRun` (inline when the task already runs on the loop, see
/// `EventLoopTaskExecutor`).
final class HTTPConnectionHandler: ConnectionHandler, Sendable {
    let connection: Connection
    let context: HTTPServerContext
    let registry: HTTPLoopRegistry

    struct LoopState {
        /// Every decision about this connection (what to serve, when to pause, close or hand
        /// off); this class only carries them out.
        var machine: HTTPConnectionStateMachine
        var encoder = HTTPResponseEncoder()
        /// The timeout tick while the machine is serving (cancelled on close and upgrade).
        var tick: ScheduledTaskHandle?
    }
    private let loopState: EventLoopBound<LoopState>

    // Each access is one statement long: nothing here calls out (into the connection, which may
    // call back) while the state is being modified.
    private var machine: HTTPConnectionStateMachine {
        get { loopState.withValue { $0.machine } }
        _modify { yield &loopState.value.machine }
    }
    private var encoder: HTTPResponseEncoder {
        get { loopState.withValue { $0.encoder } }
        _modify { yield &loopState.value.encoder }
    }
    private var tick: ScheduledTaskHandle? {
        get { loopState.withValue { $0.tick } }
        set { loopState.withValue { $0.tick = newValue } }
    }

    private static let continueBytes: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    /// Bodies above this are written as their own part (no copy into the head buffer).
    static let separateBodyThreshold = 16 * 1024
    /// Unsent bytes above which the next pipelined request waits for the response to drain.
    static let drainLowWater = 64 * 1024

    init(connection: Connection, context: HTTPServerContext, registry: HTTPLoopRegistry) {
        self.connection = connection
        self.context = context
        self.registry = registry
        let timeouts = HTTPConnectionTimeouts(headerReadTimeout: context.configuration.headerReadTimeout.clockNanoseconds,
                                              idleTimeout: context.configuration.idleTimeout.clockNanoseconds,
                                              bodyReadTimeout: context.configuration.bodyReadTimeout.clockNanoseconds,
                                              now: context.configuration.clock.now())
        loopState = EventLoopBound(LoopState(machine: HTTPConnectionStateMachine(limits: context.limits, timeouts: timeouts,
                                                                                 drainLowWater: Self.drainLowWater)),
                                   loop: connection.loop)
    }

    private var now: UInt64 { context.configuration.clock.now() }

    /// Called on the loop right after accept.
    func start() {
        connection.outboundStallTimeout = context.configuration.outboundStallTimeout.clockNanoseconds
        connection.minOutboundBytesPerSecond = context.configuration.minOutboundBytesPerSecond
        registry.add(self)
        context.observer?.connectionOpened()
        if registry.draining {
            drain()
            return
        }
        scheduleTick()
    }

    private func scheduleTick() {
        let interval = max(.milliseconds(1), context.configuration.timeoutCheckInterval).clockNanoseconds
        // Strong capture: no weak reference (side table) on a per-connection object; the tick is
        // cancelled when the connection closes or upgrades, which releases the closure.
        tick = connection.loop.scheduleTask(in: interval) { self.checkTimeouts() }
    }

    private func checkTimeouts() {
        guard connection.isOpen else { return }
        switch machine.timerFired(now: now) {
        case .stop:
            return
        case .rearm:
            scheduleTick()
        case .closeHeaderReadTimeout:
            context.logger.debug("header read timeout", metadata: ["connection": .stringConvertible(connection.id)])
            connection.close(.timeout)
        case .closeIdleTimeout:
            context.logger.debug("idle timeout", metadata: ["connection": .stringConvertible(connection.id)])
            connection.closeGracefully(.timeout)
        case .requestTimeout:
            // RFC 9110 §15.5.9: 408 when the client did not send the request in time; the
            // deadline is total (a trickled byte does not extend it).
            let requestID = RequestID.generate()
            context.logger.info("request body not received within \(context.configuration.bodyReadTimeout.wholeMilliseconds) ms (server.bodyReadTimeout): 408 and close",
                                metadata: ["req": .string(requestID), "remote": .string(connection.remoteAddress)])
            writeErrorAndClose(HTTPError(status: 408, message: "Request body not received in time"), requestID: requestID, reason: .timeout)
        }
    }

    /// Server shutdown started: close now if idle; otherwise the current/next response closes.
    func drain() {
        perform(machine.shutdown(outboundBufferedBytes: connection.outboundBufferedBytes))
    }

    private func perform(_ action: HTTPConnectionStateMachine.ShutdownAction) {
        switch action {
        case .none: break
        case .close: connection.close(.serverShutdown)
        case .closeGracefully: connection.closeGracefully(.serverShutdown)
        }
    }

    // MARK: ConnectionHandler

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        machine.bytesRead(bytes)
        serveBuffered()
        if machine.readCompleted(now: now) { connection.pauseReading() }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        tick?.cancel()
        tick = nil
        guard machine.closed(reason) else { return }
        registry.remove(connection.id)
        context.observer?.connectionClosed()
    }

    // MARK: requests

    private func serveBuffered() {
        guard machine.beginServing() else { return }
        defer { machine.endServing() }
        while connection.isOpen {
            let start = now
            switch machine.nextStep(now: start) {
            case .readMore:
                return
            case .writeContinue:
                connection.write(Self.continueBytes)
            case .dispatch(let head, let body):
                dispatch(makeRequest(head: head, body: body), start: start)
            case .refuseShuttingDown(let head, let body):
                // RFC 9110 §15.6.4: 503 while shutting down; the machine closes after answering.
                var request = makeRequest(head: head, body: body)
                request.keepAlive = false
                var response = HTTPError.serviceUnavailable().response(for: request)
                response.headers.add("Retry-After", "1")
                finish(request: request, response: response, start: start)
            case .reject(let error):
                let requestID = RequestID.generate()
                context.logger.info("rejected request: \(error.status) \(error.reason) req=\(requestID) remote=\(connection.remoteAddress)")
                writeErrorAndClose(HTTPError(status: error.status, message: error.reason), requestID: requestID, reason: .protocolError(error.reason))
                return
            }
        }
    }

    private func makeRequest(head: HTTPRequestHead, body: [UInt8]) -> HTTPRequest {
        let incomingID = head.headers["X-Request-Id"]
        let requestID = incomingID.flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        var request = HTTPRequest(method: head.method, target: head.target, version: head.version, headers: head.headers,
                                  body: body, remoteAddress: connection.remoteAddress, requestID: requestID,
                                  connectionID: connection.id, keepAlive: head.keepAlive)
        request.maxJSONDepth = context.configuration.maxJSONDepth
        return request
    }

    private func dispatch(_ request: HTTPRequest, start: UInt64) {
        let responder = context.responder
        let loop = connection.loop
        if context.configuration.handlersOnEventLoop {
            // An answer known without suspending (`/health` while the database is known to be
            // well) is written here: no task, no async frames, no hand-back.
            if let response = responder.respondImmediately(to: request) {
                finish(request: request, response: response, start: start)
                return
            }
            // Starts right here, on the loop thread (SE-0472): a handler that does not suspend
            // completes before `Task.immediate` returns and `finish` runs inline (no job queued
            // on the loop, no extra turn of it); one that awaits resumes on this loop (the
            // executor preference) when its work is done. `serveBuffered` is not re-entered by
            // that inline `finish` (the machine's `beginServing`). Apple ships `Task.immediate`
            // from macOS 26: before, the task is queued on the loop and runs later in this
            // iteration.
            let run: @Sendable () async -> Void = {
                let response = await responder.respond(to: request)
                loop.executeOrRun { self.finish(request: request, response: response, start: start) }
            }
            if #available(macOS 26, *) {
                Task.immediate(executorPreference: registry.executor, operation: run)
            } else {
                Task(executorPreference: registry.executor, operation: run)
            }
        } else {
            Task {
                let response = await responder.respond(to: request)
                loop.execute { self.finish(request: request, response: response, start: start) }
            }
        }
    }

    private func finish(request: HTTPRequest, response: HTTPResponse, start: UInt64) {
        let duration = now &- start
        context.observer?.requestFinished(method: request.method, routePattern: response.routePattern,
                                          status: response.status, durationNanoseconds: duration)
        let record = AccessRecord(request: request, response: response, duration: duration)
        let isUpgrade = response.status == 101 && response.upgrade != nil
        switch machine.responseReady(keepAliveRequested: request.keepAlive, closesWithoutAnswer: response.closesWithoutAnswer,
                                     isUpgrade: isUpgrade, connectionOpen: connection.isOpen) {
        case .drop(let reason):
            logAccess(record, outcome: .dropped(reason: reason, sentBytes: 0, totalBytes: 0))
        case .closeWithoutAnswer:
            logAccess(record, outcome: .dropped(reason: .serverShutdown, sentBytes: 0, totalBytes: 0))
            connection.close(.serverShutdown)
        case .upgrade(let leftover):
            logAccess(record, outcome: .delivered)
            encoder.encode(response, requestID: request.requestID, keepAlive: true, http10: false, omitBody: true, isUpgrade: true)
            connection.write(encoder.buffer)
            tick?.cancel()
            tick = nil
            registry.remove(connection.id)
            registry.addUpgraded(connection)
            context.observer?.connectionClosed()
            response.upgrade?(connection, leftover)
        case .write(let keepAlive):
            let omitBody = request.method == .HEAD
            // A large body goes out as the message's second part, straight from its storage, in
            // pieces as the socket becomes writable.
            let separateBody = !omitBody && !HTTPStatus.forbidsBody(response.status) && response.body.count > Self.separateBodyThreshold
            encoder.encode(response, requestID: request.requestID, keepAlive: keepAlive,
                           http10: request.version.minor == 0, omitBody: omitBody || separateBody)
            connection.write(encoder.buffer, separateBody ? response.body : [], onDone: { [self] outcome in
                logAccess(record, outcome: outcome)
                if case .delivered = outcome { perform(machine.responseDelivered()) }
            })
            perform(machine.responseWritten(keepAlive: keepAlive, outboundBufferedBytes: connection.outboundBufferedBytes, now: now))
        }
    }

    private func perform(_ action: HTTPConnectionStateMachine.AfterResponse) {
        switch action {
        case .none, .awaitDrain:
            break
        case .closeGracefully(let reason):
            connection.closeGracefully(reason)
        case .serveNext(let resumeReading):
            guard connection.isOpen else { return }
            if resumeReading { connection.resumeReading() }
            serveBuffered()
            perform(machine.servedAfterResponse(outboundBufferedBytes: connection.outboundBufferedBytes, now: now))
        }
    }

    /// Answers `error` with `Connection: close` (outside any request: a parse error or timeout),
    /// then closes gracefully.
    private func writeErrorAndClose(_ error: HTTPError, requestID: String, reason: CloseReason) {
        var response = error.response(for: nil)
        response.headers.add("Connection", "close")
        encoder.encode(response, requestID: requestID, keepAlive: false, http10: false, omitBody: false)
        connection.write(encoder.buffer)
        connection.closeGracefully(reason)
    }

    /// What the access log line of one request needs (kept until its response is written).
    struct AccessRecord {
        let method: HTTPMethod
        let path: String
        let status: Int
        let requestID: String
        let userID: String?
        let level: Logger.Level
        let duration: UInt64
        init(request: HTTPRequest, response: HTTPResponse, duration: UInt64) {
            method = request.method
            path = request.path
            status = response.status
            requestID = request.requestID
            userID = response.logUserID
            level = response.accessLogLevel
            self.duration = duration
        }
    }

    /// One line per request, written once its response was handed to the kernel (or lost):
    /// method, path, status, duration; request and user id as metadata (`req=… user=…` in the
    /// text format, keys of their own with `--log-format json`). A response that did not reach
    /// the client says so, with the reason and how much of it was sent.
    private func logAccess(_ r: AccessRecord, outcome: WriteOutcome) {
        let tenths = (r.duration + 50_000) / 100_000
        switch outcome {
        case .delivered:
            guard context.logger.logLevel <= r.level else { return }
            context.logger.log(level: r.level, "\(r.method.rawValue) \(r.path) \(r.status) \(tenths / 10).\(tenths % 10)ms",
                               metadata: ["req": .string(r.requestID), "user": .string(r.userID ?? "-")])
        case .dropped(let reason, let sent, let total):
            let level: Logger.Level = r.level > .info ? r.level : .info
            guard context.logger.logLevel <= level else { return }
            context.logger.log(level: level,
                               "\(r.method.rawValue) \(r.path) \(r.status) \(tenths / 10).\(tenths % 10)ms not delivered (\(reason)): \(sent) of \(total) bytes sent",
                               metadata: ["req": .string(r.requestID), "user": .string(r.userID ?? "-")])
        }
    }
}
