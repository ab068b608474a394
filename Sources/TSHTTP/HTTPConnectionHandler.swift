import Logging
import TSSockets

/// Serves HTTP/1.1 on one connection (RFC 9112 §9): parses requests, runs the responder for one
/// request at a time, writes responses in request order, and enforces the timeouts.
// @unchecked Sendable: all mutable state is confined to `connection.loop`. The only cross-thread
// step is the handler Task, which hands its response back with `loop.executeOrRun` (inline when
// the task already runs on the loop, see `EventLoopTaskExecutor`).
final class HTTPConnectionHandler: ConnectionHandler, @unchecked Sendable {
    let connection: Connection
    let context: HTTPServerContext
    let registry: HTTPLoopRegistry
    private var parser: HTTPParser
    private var encoder = HTTPResponseEncoder()
    private var timeouts: HTTPConnectionTimeouts
    private var inFlight = false
    /// A large response is still being handed to the kernel: the next pipelined request waits
    /// for it (streaming at the client's pace; the backlog never holds two large answers).
    private var awaitingDrain = false
    /// Why the connection closed, once it has (for the access log of a response that lost it).
    private var closedReason: CloseReason?
    private var tick: ScheduledTaskHandle?
    private var detached = false
    private var readPausedForBackpressure = false
    /// `processBuffered` is running (further up this thread's stack).
    private var processing = false

    private static let continueBytes: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    /// Bodies above this are written as their own part (no copy into the head buffer).
    static let separateBodyThreshold = 16 * 1024
    /// Unsent bytes above which the next pipelined request waits for the response to drain.
    static let drainLowWater = 64 * 1024

    init(connection: Connection, context: HTTPServerContext, registry: HTTPLoopRegistry) {
        self.connection = connection
        self.context = context
        self.registry = registry
        self.parser = HTTPParser(limits: context.limits)
        self.timeouts = HTTPConnectionTimeouts(headerReadTimeout: context.configuration.headerReadTimeout.clockNanoseconds,
                                               idleTimeout: context.configuration.idleTimeout.clockNanoseconds,
                                               bodyReadTimeout: context.configuration.bodyReadTimeout.clockNanoseconds,
                                               now: context.configuration.clock.now())
    }

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
        guard !detached, connection.isOpen else { return }
        switch timeouts.decision(now: context.configuration.clock.now()) {
        case .keepOpen:
            scheduleTick()
        case .closeHeaderReadTimeout:
            context.logger.debug("header read timeout", metadata: ["connection": .stringConvertible(connection.id)])
            connection.close(.timeout)
        case .closeIdleTimeout:
            context.logger.debug("idle timeout", metadata: ["connection": .stringConvertible(connection.id)])
            connection.closeGracefully(.timeout)
        case .closeBodyReadTimeout:
            // RFC 9110 §15.5.9: 408 when the client did not send the request in time; the
            // deadline is total (a trickled byte does not extend it).
            let requestID = RequestID.generate()
            context.logger.info("request body not received within \(context.configuration.bodyReadTimeout.wholeMilliseconds) ms (server.bodyReadTimeout): 408 and close",
                                metadata: ["req": .string(requestID), "remote": .string(connection.remoteAddress)])
            var response = HTTPError(status: 408, message: "Request body not received in time").response(for: nil)
            response.headers.add("Connection", "close")
            encoder.encode(response, requestID: requestID, keepAlive: false, http10: false, omitBody: false)
            connection.write(encoder.buffer)
            connection.closeGracefully(.timeout)
        }
    }

    /// Server shutdown started: close now if idle; otherwise the current/next response closes.
    func drain() {
        if !inFlight && !awaitingDrain && parser.progress == .idle {
            // Nothing unsent and no request under way: a plain close sends FIN; lingering would
            // only wait for keep-alive clients that never close.
            if connection.outboundBufferedBytes == 0 {
                connection.close(.serverShutdown)
            } else {
                connection.closeGracefully(.serverShutdown)
            }
        }
    }

    // MARK: ConnectionHandler

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        parser.feed(bytes)
        processBuffered()
        timeouts.update(now: context.configuration.clock.now(), progress: parser.progress, inFlight: inFlight || awaitingDrain, bytesArrived: true)
        // Back-pressure: while a handler runs, don't buffer more than one maximal request ahead.
        if (inFlight || awaitingDrain) && !readPausedForBackpressure
            && parser.bufferedBytes > context.limits.maxBodyBytes + context.limits.maxHeaderBytes + context.limits.maxRequestLineBytes {
            readPausedForBackpressure = true
            connection.pauseReading()
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        closedReason = reason
        tick?.cancel()
        tick = nil
        registry.remove(connection.id)
        if !detached { context.observer?.connectionClosed() }
    }

    // MARK: requests

    private func processBuffered() {
        // A handler that completes inline (`dispatch`) finishes inside this loop: its
        // `continueAfterResponse` must not start a nested one, or a long pipeline of small
        // requests would recurse once per request. The loop below serves what follows instead.
        if processing { return }
        processing = true
        defer { processing = false }
        while !inFlight && !awaitingDrain && !detached && connection.isOpen {
            guard let event = parser.next() else { return }
            switch event {
            case .expectContinue:
                if !registry.draining { connection.write(Self.continueBytes) }
            case .request(let head, let body, _):
                dispatch(head: head, body: body)
            case .error(let error):
                respondToParseError(error)
                return
            }
        }
    }

    private func dispatch(head: HTTPRequestHead, body: [UInt8]) {
        let clock = context.configuration.clock
        let start = clock.now()
        let incomingID = head.headers["X-Request-Id"]
        let requestID = incomingID.flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        var request = HTTPRequest(method: head.method, target: head.target, version: head.version, headers: head.headers,
                                  body: body, remoteAddress: connection.remoteAddress, requestID: requestID,
                                  connectionID: connection.id, keepAlive: head.keepAlive)
        request.maxJSONDepth = context.configuration.maxJSONDepth
        if registry.draining {
            // RFC 9110 §15.6.4: 503 while shutting down; close after answering.
            request.keepAlive = false
            var response = HTTPError.serviceUnavailable().response(for: request)
            response.headers.add("Retry-After", "1")
            finish(request: request, response: response, start: start)
            return
        }
        inFlight = true
        timeouts.update(now: start, progress: parser.progress, inFlight: true, bytesArrived: false)
        let responder = context.responder
        let loop = connection.loop
        let frozen = request
        if context.configuration.handlersOnEventLoop {
            // Starts right here, on the loop thread (SE-0472): a handler that does not suspend
            // completes before `Task.immediate` returns and `finish` runs inline (no job queued
            // on the loop, no extra turn of it); one that awaits resumes on this loop (the
            // executor preference) when its work is done. `processBuffered` is not re-entered
            // by that inline `finish` (see `processing`). Apple ships `Task.immediate` from
            // macOS 26: before, the task is queued on the loop and runs later in this iteration.
            let run: @Sendable () async -> Void = {
                let response = await responder.respond(to: frozen)
                loop.executeOrRun { self.finish(request: frozen, response: response, start: start) }
            }
            if #available(macOS 26, *) {
                Task.immediate(executorPreference: registry.executor, operation: run)
            } else {
                Task(executorPreference: registry.executor, operation: run)
            }
        } else {
            Task {
                let response = await responder.respond(to: frozen)
                loop.execute { self.finish(request: frozen, response: response, start: start) }
            }
        }
    }

    private func finish(request: HTTPRequest, response: HTTPResponse, start: UInt64) {
        inFlight = false
        let duration = context.configuration.clock.now() &- start
        context.observer?.requestFinished(method: request.method, routePattern: response.routePattern,
                                          status: response.status, durationNanoseconds: duration)
        let record = AccessRecord(request: request, response: response, duration: duration)
        guard connection.isOpen else {
            logAccess(record, outcome: .dropped(reason: closedReason ?? .local("closing"), sentBytes: 0, totalBytes: 0))
            return
        }

        if response.closesWithoutAnswer {
            logAccess(record, outcome: .dropped(reason: .serverShutdown, sentBytes: 0, totalBytes: 0))
            connection.close(.serverShutdown)
            return
        }
        if response.status == 101, let upgrade = response.upgrade {
            logAccess(record, outcome: .delivered)
            encoder.encode(response, requestID: request.requestID, keepAlive: true, http10: false, omitBody: true, isUpgrade: true)
            connection.write(encoder.buffer)
            let leftover = parser.takeRemainingBytes()
            detached = true
            tick?.cancel()
            tick = nil
            registry.remove(connection.id)
            registry.addUpgraded(connection)
            context.observer?.connectionClosed()
            upgrade(connection, leftover)
            return
        }

        let keepAlive = request.keepAlive && !registry.draining && !parser.hasFailed
        let omitBody = request.method == .HEAD
        // A large body goes out as the message's second part, straight from its storage, in
        // pieces as the socket becomes writable.
        let separateBody = !omitBody && !HTTPStatus.forbidsBody(response.status) && response.body.count > Self.separateBodyThreshold
        encoder.encode(response, requestID: request.requestID, keepAlive: keepAlive,
                       http10: request.version.minor == 0, omitBody: omitBody || separateBody)
        connection.write(encoder.buffer, separateBody ? response.body : [], onDone: { [self] outcome in
            logAccess(record, outcome: outcome)
            if awaitingDrain, case .delivered = outcome {
                awaitingDrain = false
                continueAfterResponse()
            }
        })
        if !keepAlive {
            connection.closeGracefully(registry.draining ? .serverShutdown : .local("Connection: close"))
            return
        }
        if connection.outboundBufferedBytes > Self.drainLowWater {
            awaitingDrain = true
            timeouts.update(now: context.configuration.clock.now(), progress: parser.progress, inFlight: true, bytesArrived: false)
            return
        }
        continueAfterResponse()
    }

    /// The previous response is written (or mostly handed to the kernel): serve what follows.
    private func continueAfterResponse() {
        guard connection.isOpen, !detached else { return }
        if readPausedForBackpressure {
            readPausedForBackpressure = false
            connection.resumeReading()
        }
        processBuffered()
        if registry.draining { drain() }
        timeouts.update(now: context.configuration.clock.now(), progress: parser.progress, inFlight: inFlight || awaitingDrain, bytesArrived: false)
    }

    private func respondToParseError(_ error: HTTPParseError) {
        let requestID = RequestID.generate()
        context.logger.info("rejected request: \(error.status) \(error.reason) req=\(requestID) remote=\(connection.remoteAddress)")
        var response = HTTPError(status: error.status, message: error.reason).response(for: nil)
        response.headers.add("Connection", "close")
        encoder.encode(response, requestID: requestID, keepAlive: false, http10: false, omitBody: false)
        connection.write(encoder.buffer)
        connection.closeGracefully(.protocolError(error.reason))
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
