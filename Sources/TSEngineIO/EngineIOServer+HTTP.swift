import TSHTTP
import TSSockets
import TSWebSocket

extension EngineIOServer {
    /// Answers one request under the mount path (Engine.IO v4 protocol, "Handshake",
    /// "HTTP long-polling", "WebSocket", "Upgrade"). Errors are 400 with the reference
    /// server's `{"code":N,"message":"..."}` body.
    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let origin = request.header("Origin")
        guard request.path.hasPrefix(mountPrefix) else {
            return errorResponse(EngineHTTPError(status: 404, code: 3, message: "Bad request"), origin: origin)
        }
        if request.method == .OPTIONS {
            // CORS preflight.
            var r = HTTPResponse(status: 204)
            addCORS(&r, origin: origin, preflight: true)
            return r
        }
        let query = request.queryItems
        let version: Int
        switch query["EIO"] {
        case "4": version = 4
        case "3" where configuration.allowEIO3: version = 3
        default: return errorResponse(.unsupportedProtocolVersion, origin: origin)
        }
        guard let transportName = query["transport"], let transport = EngineTransport(rawValue: transportName),
              (transport == .polling && configuration.allowPolling) || (transport == .websocket && configuration.allowWebSocket)
        else { return errorResponse(.unknownTransport, origin: origin) }

        if let sid = query["sid"] {
            guard let session = session(id: sid) else {
                // The GET of a long-poll cycle the client closed on another connection (handled
                // first by another loop) is answered as if it had been parked: see `poll`.
                if transport == .polling, request.method == .GET, let reply = takeClosedPollReply(sid: sid) {
                    return pollingResponse(reply, origin: origin)
                }
                return errorResponse(.unknownSID, origin: origin)
            }
            switch transport {
            case .polling:
                await session.awaitProbeInput()
                if request.method == .GET {
                    switch await session.poll() {
                    case .payload(let body): return pollingResponse(body, origin: origin, binary: session.protocolVersion == 3 && body.first.map { $0 <= 1 } == true)
                    case .error(.unknownSID):
                        // Closed meanwhile: its owed `6` may have moved to the closed table.
                        if let reply = takeClosedPollReply(sid: sid) { return pollingResponse(reply, origin: origin) }
                        return errorResponse(.unknownSID, origin: origin)
                    case .error(let e): return errorResponse(e, origin: origin)
                    case .noAnswer: return .noAnswer
                    }
                } else if request.method == .POST {
                    if let e = session.post(request.body) { return errorResponse(e, origin: origin) }
                    var r = HTTPResponse(status: 200, headers: ["Content-Type": "text/html; charset=UTF-8"], body: Array("ok".utf8))
                    addCORS(&r, origin: origin, preflight: false)
                    return r
                }
                return errorResponse(.badRequest, origin: origin)
            case .websocket:
                // Upgrade of a polling session (Engine.IO v4, "Upgrade"). As the reference server
                // does, the handshake completes (101) even when the session is already on
                // websocket or another probe is attached; that new socket is then closed at
                // once and the session's transport keeps working.
                return WebSocketHandshake.response(for: request, configuration: webSocketConfiguration) { [weak self] ws in
                    if let limit = self?.maxOutboundBytesPerWebSocket { ws.connection.maxOutboundBytes = limit }
                    guard let self else { ws.close(code: WebSocketCloseCode.goingAway, reason: ""); return }
                    let transport = self.engineTransport(for: ws)
                    ws.delegate = EngineWebSocketHandler(session: session, transport: transport)
                    if !session.attachProbe(transport) { ws.close(code: WebSocketCloseCode.normalClosure, reason: "") }
                }
            }
        }

        // Handshake: GET only.
        guard request.method == .GET else { return errorResponse(.badHandshakeMethod, origin: origin) }
        let info = EngineHandshakeInfo(query: query, headers: request.headers.fields,
                                       remoteAddress: request.remoteAddress)
        let address = configuration.clientAddress?(request) ?? ConnectionAddressCap.host(of: request.remoteAddress)
        switch transport {
        case .polling:
            let session: EngineIOSession
            switch openSession(transport: .polling, handshake: info, protocolVersion: version, address: address, admit: true) {
            case .success(let s): session = s
            case .failure(let refusal): return handshakeRefused(refusal, address: address, origin: origin)
            }
            let open = session.pollPayload([session.openPacket(upgrades: configuration.allowWebSocket ? ["websocket"] : [])])
            session.rearmTimer()
            sessionDidOpen(session, request: request)
            return pollingResponse(open, origin: origin)
        case .websocket:
            guard request.header("Upgrade")?.lowercased() == "websocket" else { return errorResponse(.badRequest, origin: origin) }
            // Checked before the 101: a refused client gets the JSON answer, not a socket closed
            // at once. Upgrades between this check and the session count past the bound by at
            // most the handshakes in flight.
            if let refusal = refuseHandshake(from: address) { return handshakeRefused(refusal, address: address, origin: origin) }
            return WebSocketHandshake.response(for: request, configuration: webSocketConfiguration) { [weak self] ws in
                guard let self else { ws.close(code: WebSocketCloseCode.goingAway, reason: ""); return }
                ws.connection.maxOutboundBytes = self.maxOutboundBytesPerWebSocket
                let session = self.makeSession(transport: .websocket, handshake: info, protocolVersion: version, address: address)
                let transport = self.engineTransport(for: ws)
                ws.delegate = EngineWebSocketHandler(session: session, transport: transport)
                session.startWebSocket(transport)
                self.sessionDidOpen(session, request: request)
            }
        }
    }

    /// The answer to a handshake past the bounds on sessions without a CONNECT, counted in the
    /// refusal log (one line per interval, not one per handshake).
    func handshakeRefused(_ refusal: EngineUnconnectedSessions.Refusal, address: String, origin: String?) -> HTTPResponse {
        switch refusal {
        case .perAddress:
            handshakeRefusals.record(address: address, reason: "\(configuration.maxUnconnectedSessionsPerAddress) sessions without a Socket.IO CONNECT from that address (realtime.maxUnconnectedSessionsPerAddress): answered 403",
                                     loop: timerLoop)
            return errorResponse(.tooManyUnconnectedSessionsFromAddress, origin: origin)
        case .total:
            handshakeRefusals.record(address: address, reason: "\(configuration.maxUnconnectedSessions) sessions without a Socket.IO CONNECT on the server (realtime.maxUnconnectedSessions): answered 503",
                                     loop: timerLoop)
            var r = errorResponse(.tooManyUnconnectedSessions, origin: origin)
            r.headers.replaceOrAdd("Retry-After", "1")
            return r
        }
    }

    /// `configuration.path` without its trailing slash (`/socket.io`): requests must start with it.
    var mountPrefix: String {
        var p = configuration.path
        if p.hasSuffix("/") { p.removeLast() }
        return p
    }

    /// Registers `handle(_:)` for every method on `<path>*` (e.g. `/socket.io/*`). Bad methods
    /// reach the server, which answers them 400 like the reference server (not the router's 405).
    public func mount(on router: inout RouterBuilder) {
        let pattern = mountPrefix + "/*"
        for m: HTTPMethod in [.GET, .POST, .PUT, .DELETE, .PATCH, .OPTIONS, .HEAD] {
            router.add(m, pattern) { [self] request in await self.handle(request) }
        }
    }

    /// WebSocket limits derived from `maxPayload` (a message is one packet: type digit + data).
    var webSocketConfiguration: WebSocketConfiguration {
        var ws = WebSocketConfiguration(maxFrameSize: configuration.maxPayload + 16, maxMessageSize: configuration.maxPayload + 16)
        ws.allowedOrigins = configuration.webSocketAllowedOrigins
        ws.frameReadTimeout = configuration.frameReadTimeout  // transport hook: total per-frame deadline
        return ws
    }

    /// `binary`: an Engine.IO v3 binary-form payload (`application/octet-stream`).
    func pollingResponse(_ body: [UInt8], origin: String?, binary: Bool = false) -> HTTPResponse {
        let type = binary ? "application/octet-stream" : "text/plain; charset=UTF-8"
        var r = HTTPResponse(status: 200, headers: ["Content-Type": type, "Cache-Control": "no-store"], body: body)
        addCORS(&r, origin: origin, preflight: false)
        return r
    }

    func errorResponse(_ e: EngineHTTPError, origin: String?) -> HTTPResponse {
        var r = HTTPResponse(status: e.status, headers: ["Content-Type": "application/json"], body: e.jsonBody)
        addCORS(&r, origin: origin, preflight: false)
        return r
    }

    /// CORS for polling (browsers): the request's origin is reflected when allowed
    /// (`allowedOrigins` contains it or `*`), with credentials; nothing otherwise.
    func addCORS(_ r: inout HTTPResponse, origin: String?, preflight: Bool) {
        guard let origin, !configuration.allowedOrigins.isEmpty else { return }
        let allowed = configuration.allowedOrigins.contains("*")
            || configuration.allowedOrigins.contains { $0.lowercased() == origin.lowercased() }
        guard allowed else { return }
        r.headers.replaceOrAdd("Access-Control-Allow-Origin", origin)
        r.headers.replaceOrAdd("Access-Control-Allow-Credentials", "true")
        r.headers.replaceOrAdd("Vary", "Origin")
        if preflight {
            r.headers.replaceOrAdd("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            r.headers.replaceOrAdd("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Socket-Id")
            r.headers.replaceOrAdd("Access-Control-Max-Age", "86400")
        }
    }
}
