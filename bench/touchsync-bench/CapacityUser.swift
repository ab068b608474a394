import TSSockets

/// One simulated app user (bench/README.md, "Capacity"): its Socket.IO session, opened the way
/// the app's client opens it, its REST connection, and where it is. The mix of what it does is
/// in CapacityUser+Mix.swift.
// @unchecked Sendable: loop-confined (every method runs on `driver.loop`).
final class CapacityUser: @unchecked Sendable {
    enum Phase { case idle, connecting, joining, online, background, stopped }
    /// What an ack id was for.
    enum Ack { case join, leave, create(record: Int?, room: Int), update, delete }

    let index: Int
    unowned let driver: CapacityDriver
    let token: String
    /// The user's 3 rooms (global indexes); `slot` is the one it is in.
    let rooms: [Int]
    var slot = 0
    var room: Int { rooms[slot] }
    let source: String?

    private(set) var phase: Phase = .idle
    /// Part of the current step; a stopped user's timers end.
    var active = false
    /// Bumped on every connect, background and stop: callbacks of an older session are ignored.
    private(set) var epoch = 0
    var timerEpoch = 0

    private var poll: HTTPBenchClient?
    private var post: HTTPBenchClient?
    private(set) var socket: SocketIOBenchClient?
    private var rest: HTTPBenchClient?
    private var restQueue: [(route: String, method: String, path: String, body: String?)] = []

    /// When the current connect began, and whether it is a return from the background (measured).
    private var connectStarted: UInt64 = 0
    private var returning = false
    private var everOnline = false
    /// Since when the Socket.IO session is connected (CONNECT answered), and the earlier sessions.
    private var connectedSince: UInt64?
    private var pastSessions: [(from: UInt64, to: UInt64)] = []
    private var joinSent: UInt64?
    var pendingAcks: [Int: (kind: Ack, sent: UInt64)] = [:]
    /// The element this user created last in each room; it deletes it after its next create there.
    var ownElement: [Int: String] = [:]
    var nextWriteCreates: Bool

    init(index: Int, driver: CapacityDriver, token: String, source: String?) {
        self.index = index
        self.driver = driver
        self.token = token
        self.source = source
        rooms = CapacityLayout.rooms(ofUser: index)
        slot = index % 3
        nextWriteCreates = index % 2 == 0
    }

    var now: UInt64 { driver.clock.now() }
    var isOnline: Bool { phase == .online }

    // MARK: connect: the polling handshake, CONNECT with the token, the websocket upgrade, room:join

    /// Opens the session as Socket.IO-Client-Swift and engine.io-client do with their defaults:
    /// `GET` the Engine.IO v4 handshake over polling, then at once POST the Socket.IO CONNECT
    /// (`40{"token":…}`, the token in `auth`), long-poll, and probe a websocket for the upgrade;
    /// `room:join` goes out once the session is connected and on the websocket.
    func connect(returning: Bool) {
        epoch += 1
        let e = epoch
        phase = .connecting
        if !returning || !self.returning { connectStarted = now }
        self.returning = returning
        do {
            let p = try HTTPBenchClient.open(host: driver.host, port: driver.port, loop: driver.loop, id: UInt64(index), source: source)
            poll = p
            p.request("GET", "/socket.io/?EIO=4&transport=polling&t=\(index)-\(e)", token: nil) { status, body in
                guard e == self.epoch else { return }
                guard status == 200, let sid = Self.sid(body) else {
                    self.connectFailed("handshake answered HTTP \(status) \(String(decoding: body.prefix(120), as: UTF8.self))")
                    return
                }
                self.upgrade(sid: sid, epoch: e)
            }
        } catch {
            connectFailed("handshake connect: \(error)")
        }
    }

    private func upgrade(sid: String, epoch e: Int) {
        do {
            let ws = try SocketIOBenchClient.open(index: index, host: driver.host, port: driver.port, token: token, loop: driver.loop,
                                                  sid: sid, source: source)
            socket = ws
            ws.onConnected = { [unowned self] c in
                guard c === self.socket else { return }
                self.connectedSince = self.now
                self.joinWhenReady()
            }
            ws.onUpgraded = { [unowned self] c in
                guard c === self.socket else { return }
                self.joinWhenReady()
            }
            ws.onEvent = { [unowned self] c, m in if c === self.socket { self.event(m) } }
            ws.onAck = { [unowned self] c, id, m in if c === self.socket { self.ack(id, m) } }
            ws.onClose = { [unowned self] c, why in if c === self.socket { self.lost("socket closed: \(why)") } }
            let c = try HTTPBenchClient.open(host: driver.host, port: driver.port, loop: driver.loop, id: UInt64(index), source: source)
            post = c
            ws.pollsInFlight += 1
            c.request("POST", "/socket.io/?EIO=4&transport=polling&sid=\(sid)", token: nil, body: "40{\"token\":\"\(token)\"}",
                      contentType: "text/plain;charset=UTF-8") { status, body in
                c.connection.close(.local("posted"))
                guard e == self.epoch else { return }
                self.post = nil
                guard status == 200 else {
                    self.connectFailed("CONNECT POST answered HTTP \(status) \(String(decoding: body.prefix(120), as: UTF8.self))")
                    return
                }
                ws.pollsInFlight -= 1
            }
            longPoll(sid: sid, epoch: e)
        } catch {
            connectFailed("upgrade: \(error)")
        }
    }

    /// The long-poll of the session until the probe: its payload's packets (separated by 0x1E,
    /// Engine.IO v4) go to the websocket client, where the CONNECT's answer may arrive first.
    /// The server ends the poll with a noop once it answered the probe; no poll follows, and what
    /// the session has for the client waits for the upgrade.
    private func longPoll(sid: String, epoch e: Int) {
        guard let p = poll, let ws = socket, e == epoch else { return }
        if ws.probed {
            p.connection.close(.local("probed"))
            poll = nil
            return
        }
        ws.pollsInFlight += 1
        p.request("GET", "/socket.io/?EIO=4&transport=polling&sid=\(sid)", token: nil) { status, body in
            guard e == self.epoch else { return }
            guard status == 200 else {
                self.connectFailed("long-poll answered HTTP \(status) \(String(decoding: body.prefix(120), as: UTF8.self))")
                return
            }
            var start = 0
            for i in 0...body.count where i == body.count || body[i] == 0x1E {
                if i > start { ws.receiveEnginePacket(UnsafeRawBufferPointer(rebasing: body[start..<i])) }
                start = i + 1
            }
            self.longPoll(sid: sid, epoch: e)
            ws.pollsInFlight -= 1
        }
    }

    private func joinWhenReady() {
        guard phase == .connecting, let ws = socket, ws.upgraded, ws.state == .connected else { return }
        phase = .joining
        join()
    }

    func join() {
        guard let ws = socket else { return }
        joinSent = now
        let id = ws.emitWithAck("[\"room:join\",{\"roomId\":\"\(driver.seed.roomIds[room])\"}]")
        pendingAcks[id] = (.join, now)
    }

    /// The join's ack: the session is usable. A return from the background is measured from its
    /// first handshake byte to here, and the app refreshes MyRooms and the feed's like/save state.
    func joined() {
        guard phase == .joining else { return }
        phase = .online
        if returning {
            driver.recorder.sample(.reconnect, now &- connectStarted)
            returning = false
            myRooms()
            interactionState()
        }
        if !everOnline {
            everOnline = true
            driver.userReady(self, ok: true)
            startTimers()
        }
    }

    func batchArrived() {
        guard let t = joinSent else { return }
        joinSent = nil
        driver.recorder.sample(.join, now &- t)
    }

    /// The `room:join` ack came without an `elements:batch` before it.
    var joinUnanswered: Bool { joinSent != nil }

    private func connectFailed(_ why: String) {
        driver.recorder.error("connect", why)
        closeAll()
        phase = .idle
        if !everOnline { driver.userReady(self, ok: false) }
        retryLater()
    }

    /// The server closed the session: the app reconnects after a second (Socket.IO clients'
    /// default reconnection delay).
    private func lost(_ why: String) {
        driver.recorder.error("socket closed by the server", why)
        closeAll()
        phase = .idle
        retryLater()
    }

    private func retryLater() {
        let e = epoch
        driver.loop.scheduleTask(in: 1_000_000_000) { [self] in
            guard active, e == epoch, phase == .idle else { return }
            connect(returning: everOnline)
        }
    }

    // MARK: background and stop

    /// The app goes to the background: it disconnects its socket (Socket.IO DISCONNECT, then
    /// closes the websocket) and its REST connection, and comes back after `pause`.
    func goBackground(pause: UInt64) {
        guard phase == .online else { return }
        socket?.sendText(Array("41".utf8))
        closeAll()
        phase = .background
        let e = epoch
        driver.loop.scheduleTask(in: pause) { [self] in
            guard active, e == epoch, phase == .background else { return }
            connect(returning: true)
        }
    }

    func stop() {
        active = false
        timerEpoch += 1
        if phase == .online || phase == .joining { socket?.sendText(Array("41".utf8)) }
        closeAll()
        phase = .stopped
        everOnline = false
        returning = false
    }

    private func closeAll() {
        epoch += 1
        if let s = connectedSince {
            pastSessions.append((s, now))
            connectedSince = nil
        }
        for case (.create(let record?, _), _) in pendingAcks.values { driver.recorder.abandon(record) }
        // Forgotten before they close: a close completes a request in flight at once, and its
        // callback must see a connection that is no longer the user's.
        let connections = [poll, post, rest], ws = socket
        poll = nil
        post = nil
        rest = nil
        socket = nil
        restQueue = []
        for c in connections { c?.connection.close(.local("closed by the user")) }
        ws?.close()
        pendingAcks = [:]
        joinSent = nil
    }

    /// Whether the session was connected through all of [from, to] (so every event emitted to its
    /// user in that time had to reach it).
    func wasConnected(from: UInt64, to: UInt64) -> Bool {
        if let s = connectedSince, s <= from { return true }
        return pastSessions.contains { $0.from <= from && $0.to >= to }
    }

    /// Sessions that ended before `t` are no longer needed.
    func forgetSessions(before t: UInt64) { pastSessions.removeAll { $0.to < t } }

    // MARK: REST on the user's keep-alive connection, one request at a time

    func restCall(_ route: String, _ method: String, _ path: String, body: String? = nil) {
        guard phase == .online else { return }
        restQueue.append((route, method, path, body))
        if restQueue.count == 1 { pumpRest() }
    }

    private func pumpRest() {
        guard let call = restQueue.first else { return }
        if rest == nil || !(rest!.connection.isOpen) {
            do { rest = try HTTPBenchClient.open(host: driver.host, port: driver.port, loop: driver.loop, id: UInt64(index), source: source) } catch {
                driver.recorder.error("REST connect", "\(error)")
                restQueue.removeAll()
                return
            }
        }
        let c = rest!
        let sent = now
        c.request(call.method, call.path, token: token, body: call.body) { status, body in
            guard c === self.rest else { return }  // closed on purpose (background, stop)
            self.driver.recorder.rest(call.route, self.now &- sent, status: status,
                                      detail: status >= 400 || status == 0 ? String(decoding: body.prefix(160), as: UTF8.self) : "")
            self.restQueue.removeFirst()
            self.pumpRest()
        }
    }

    // MARK: helpers

    /// The `sid` of an Engine.IO open packet (`0{"sid":"…",…}`).
    static func sid(_ body: UnsafeRawBufferPointer) -> String? {
        guard body.first == UInt8(ascii: "0"), let at = Bytes.find(body, Array("\"sid\":\"".utf8)) else { return nil }
        var end = at
        while end < body.count, body[end] != UInt8(ascii: "\"") { end += 1 }
        return end < body.count ? String(decoding: UnsafeRawBufferPointer(rebasing: body[at..<end]), as: UTF8.self) : nil
    }
}
