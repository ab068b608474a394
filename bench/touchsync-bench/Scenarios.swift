import Foundation
import TSSockets

/// What every scenario needs: where the server is, the seeded ids (bench/.data) and the loop.
struct BenchEnv: Sendable {
    let host: String
    let port: Int
    /// Tokens of the 1000 users (members of the toggle and join rooms).
    let tokens: [String]
    /// Tokens of the fan-out room's 100 members (sockets of the fan-out and reconnect scenarios).
    let memberTokens: [String]
    let ownerToken: String
    let files: [String: [String]]
    let serverPID: Int32?
    let loop: EventLoop
    /// Where socket i connects: socketEndpoints[i % count] (`--socket-urls`; default the --url server).
    var socketEndpoints: [Endpoint] = []

    struct Endpoint: Sendable {
        let host: String
        let port: Int
    }

    static func endpoint(_ url: String) throws -> Endpoint {
        var rest = Substring(url)
        if rest.hasPrefix("http://") { rest = rest.dropFirst(7) }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        let parts = rest.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { throw BenchError("a URL must look like http://127.0.0.1:3000: \(url)") }
        return Endpoint(host: String(parts[0]), port: port)
    }

    func socketEndpoint(_ i: Int) -> Endpoint {
        socketEndpoints.isEmpty ? Endpoint(host: host, port: port) : socketEndpoints[i % socketEndpoints.count]
    }

    static func load(url: String, data: String, serverPID: Int?) throws -> BenchEnv {
        var rest = Substring(url)
        if rest.hasPrefix("http://") { rest = rest.dropFirst(7) }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        let parts = rest.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { throw BenchError("--url must look like http://127.0.0.1:3000") }
        var files: [String: [String]] = [:]
        for name in ["tokens", "member-tokens", "toggle-room", "join-room", "fanout-room", "create-room"] {
            let text = try String(contentsOfFile: "\(data)/\(name).txt", encoding: .utf8)
            files[name] = text.split(separator: "\n").map(String.init)
        }
        let tokens = files["tokens"]!
        return BenchEnv(host: String(parts[0]), port: port, tokens: tokens, memberTokens: files["member-tokens"]!, ownerToken: tokens[0], files: files,
                        serverPID: serverPID.map { Int32($0) }, loop: try EventLoop())
    }

    func one(_ name: String) -> String { files[name]!.first! }

    /// VmRSS of the server in KiB (from /proc/PID/status), or nil. `field: "RssAnon:"` gives
    /// its anonymous part (heap, stacks: without the file-backed pages of code and libraries).
    func serverRSS(field: String = "VmRSS:") -> Int? {
        serverPID.flatMap { ProcFS.statusKiB(pid: $0, field: field) }
    }

    /// CPU time of the server in clock ticks (`/proc/PID/stat` utime, stime), whole process
    /// and per thread (`/proc/PID/task/TID/stat`, keyed by "comm/tid"), or nil.
    func serverCPU() -> (user: Int, system: Int, threads: [String: (Int, Int)])? {
        guard let pid = serverPID, let whole = Self.cpuTicks("/proc/\(pid)/stat") else { return nil }
        var threads: [String: (Int, Int)] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            if let t = Self.cpuTicks("/proc/\(pid)/task/\(tid)/stat") { threads["\(t.comm)/\(tid)"] = (t.user, t.system) }
        }
        return (whole.user, whole.system, threads)
    }

    /// (comm, utime, stime) of a proc stat file (fields 14 and 15, counted after the `)` of comm).
    static func cpuTicks(_ path: String) -> (comm: String, user: Int, system: Int)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let comm = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Int(fields[11]), let s = Int(fields[12]) else { return nil }
        return (comm, u, s)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Percentiles of nanosecond samples, printed in milliseconds.
struct Percentiles {
    let count: Int
    let p50: Double, p90: Double, p99: Double, max: Double

    init(_ samples: [UInt64]) {
        let s = samples.sorted()
        count = s.count
        func at(_ q: Double) -> Double {
            guard !s.isEmpty else { return .nan }
            let rank = Swift.max(0, Swift.min(s.count - 1, Int((Double(s.count) * q).rounded(.up)) - 1))
            return Double(s[rank]) / 1e6
        }
        p50 = at(0.50); p90 = at(0.90); p99 = at(0.99); max = s.last.map { Double($0) / 1e6 } ?? .nan
    }

    var text: String { String(format: "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (n=%d)", p50, p90, p99, max, count) }
}

/// Blocks the calling (main) thread until the loop-side scenario calls `finish`.
// @unchecked Sendable: `result` is written once before `semaphore.signal()` and read after `wait()`.
final class Completion: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var result: [String: Double] = [:]
    func finish(_ r: [String: Double]) {
        result = r
        semaphore.signal()
    }
    func wait() -> [String: Double] {
        semaphore.wait()
        return result
    }
}

/// Opens `count` Socket.IO clients, at most `window` handshakes in flight, optionally joining a
/// room; calls `ready` once every socket is connected (and joined).
// @unchecked Sendable: loop-confined (all methods run on `env.loop`).
final class SocketFleet: @unchecked Sendable {
    let env: BenchEnv
    let count: Int
    let joinRoom: String?
    let window: Int
    var clients: [SocketIOBenchClient] = []
    private var opened = 0
    private var inFlight = 0
    private(set) var ready = 0
    var failures = 0
    var readyTimes: [UInt64] = []
    private var startedAt: [UInt64] = []
    var onReady: (() -> Void)?
    var onEvent: ((SocketIOBenchClient, UnsafeRawBufferPointer) -> Void)?
    var idOffset: UInt64 = 0
    private let clock = SystemClock()

    let tokens: [String]

    init(env: BenchEnv, count: Int, joinRoom: String?, tokens: [String], window: Int = 256) {
        self.env = env
        self.tokens = tokens
        self.count = count
        self.joinRoom = joinRoom
        self.window = window
    }

    /// Starts (or restarts, after `dropAll`) connecting every socket; `since` is the origin of `readyTimes`.
    func connectAll(since: UInt64) {
        opened = 0
        inFlight = 0
        ready = 0
        readyTimes = []
        startedAt = Array(repeating: since, count: count)
        clients = []
        clients.reserveCapacity(count)
        pump()
    }

    private func pump() {
        while inFlight < window && opened < count {
            let i = opened
            opened += 1
            inFlight += 1
            do {
                let endpoint = env.socketEndpoint(i)
                let c = try SocketIOBenchClient.open(index: i, host: endpoint.host, port: endpoint.port,
                                                     token: tokens[i % tokens.count], loop: env.loop)
                c.onConnected = { [unowned self] c in
                    if let room = self.joinRoom {
                        c.emitWithAck("[\"room:join\",{\"roomId\":\"\(room)\"}]")
                    } else { self.socketReady(c) }
                }
                c.onAck = { [unowned self] c, _, _ in
                    if c.state == .connected, self.readyTimes.count < self.count, !c.joinedOnce {
                        c.joinedOnce = true
                        self.socketReady(c)
                    }
                }
                c.onEvent = { [unowned self] c, m in self.onEvent?(c, m) }
                c.onClose = { [unowned self] c, why in
                    if !c.joinedOnce && !c.droppedOnPurpose {
                        self.failures += 1
                        if self.failures <= 5 { print("socket \(c.index) failed before ready: \(why)") }
                        self.inFlight -= 1
                        self.ready += 1  // count it so the run can finish; reported as a failure
                        self.checkDone()
                        self.pump()
                    }
                }
                clients.append(c)
            } catch {
                failures += 1
                inFlight -= 1
                ready += 1
                if failures <= 5 { print("connect \(i) failed: \(error)") }
            }
        }
        checkDone()
    }

    private func socketReady(_ c: SocketIOBenchClient) {
        c.joinedOnce = true
        readyTimes.append(clock.now() &- startedAt[c.index])
        inFlight -= 1
        ready += 1
        pump()
    }

    private func checkDone() {
        if ready == count, opened == count {
            let r = onReady
            onReady = nil
            r?()
        }
    }

    func dropAll() {
        for c in clients {
            c.droppedOnPurpose = true
            c.close()
        }
    }
}

/// Room (or global) fan-out: N sockets, E element creations over REST, creation→delivery latency.
// @unchecked Sendable: loop-confined.
final class FanoutScenario: @unchecked Sendable {
    struct Options {
        var sockets = 1000
        var events = 200
        var rate = 100.0          // creations per second; 0 = closed loop on `concurrency` connections
        var concurrency = 4
        var global = false
        var warmup = 10
    }

    let env: BenchEnv
    let options: Options
    let completion = Completion()
    private let clock = SystemClock()
    private var fleet: SocketFleet!
    private var http: [HTTPBenchClient] = []
    private var room: String { env.one("fanout-room") }
    private let prefix: [UInt8]
    private let idKey: [UInt8]
    private var measuring = false
    private var deliveries: [(UInt64, UInt64)] = []   // (element id hash, arrival time)
    private var sendTimes: [UInt64: UInt64] = [:]     // element id hash -> scheduled creation time
    private var restLatencies: [UInt64] = []
    private var issued = 0
    private var answered = 0
    private var errors = 0
    private var runStart: UInt64 = 0
    private var lastAnswer: UInt64 = 0
    private var rssBefore = 0, rssAfter = 0
    private var anonBefore = 0, anonAfter = 0
    private var cpuStart: (user: Int, system: Int, threads: [String: (Int, Int)])?
    private var due: [UInt64] = []   // scheduled times waiting for a free connection

    init(env: BenchEnv, options: Options) {
        self.env = env
        self.options = options
        prefix = Array((options.global ? "42[\"element:created:global\"," : "42[\"element:created\",").utf8)
        idKey = Array((options.global ? "\"elementId\":" : "\"id\":").utf8)
    }

    func run() -> [String: Double] {
        env.loop.execute { self.start() }
        return completion.wait()
    }

    private func start() {
        do {
            for i in 0..<max(1, options.concurrency) {
                http.append(try HTTPBenchClient.open(host: env.host, port: env.port, loop: env.loop, id: 1_000_000 + UInt64(i)))
            }
        } catch { fatal("http connect: \(error)") }
        // Empty the room first so joins don't carry the elements of earlier runs.
        http[0].request("DELETE", "/api/rooms/\(room)/elements", token: env.ownerToken) { status, body in
            guard status == 200 else { self.fatal("clearing the room: HTTP \(status) \(String(decoding: body, as: UTF8.self))") }
            self.connectSockets()
        }
    }

    private func fatal(_ s: String) -> Never {
        print("fanout: \(s)")
        exit(1)
    }

    private func connectSockets() {
        rssBefore = env.serverRSS() ?? 0
        anonBefore = env.serverRSS(field: "RssAnon:") ?? 0
        fleet = SocketFleet(env: env, count: options.sockets, joinRoom: options.global ? nil : room, tokens: env.memberTokens)
        fleet.onEvent = { [unowned self] _, m in self.event(m) }
        let t0 = clock.now()
        fleet.onReady = { [unowned self] in
            let took = Double(self.clock.now() &- t0) / 1e9
            print(String(format: "%d sockets ready in %.2f s (%d failed)", self.options.sockets, took, self.fleet.failures))
            // Let allocations settle, then read the server's RSS and warm up.
            self.env.loop.scheduleTask(in: 500_000_000) {
                self.rssAfter = self.env.serverRSS() ?? 0
                self.anonAfter = self.env.serverRSS(field: "RssAnon:") ?? 0
                self.warmup(self.options.warmup)
            }
        }
        fleet.connectAll(since: t0)
    }

    private func event(_ m: UnsafeRawBufferPointer) {
        guard measuring, Bytes.hasPrefix(m, prefix) else { return }
        guard let h = Bytes.idHash(m, key: idKey) else { return }
        deliveries.append((h, clock.now()))
    }

    private func warmup(_ left: Int) {
        guard left > 0 else {
            env.loop.scheduleTask(in: 300_000_000) { self.measure() }
            return
        }
        create(on: http[0], scheduled: clock.now()) { self.warmup(left - 1) }
    }

    private func create(on c: HTTPBenchClient, scheduled: UInt64, then: @escaping () -> Void) {
        let body = "{\"type\":\"note\",\"content\":\"fanout\",\"positionX\":10,\"positionY\":20,\"width\":100,\"height\":80}"
        c.request("POST", "/api/rooms/\(room)/elements", token: env.ownerToken, body: body) { status, body in
            let now = self.clock.now()
            if status == 201, let h = Bytes.idHash(body, key: Array("\"id\":".utf8)) {
                if self.measuring {
                    self.sendTimes[h] = scheduled
                    self.restLatencies.append(now &- scheduled)
                }
            } else {
                self.errors += 1
                if self.errors <= 3 { print("create failed: HTTP \(status) \(String(decoding: body, as: UTF8.self))") }
            }
            then()
        }
    }

    private func measure() {
        measuring = true
        deliveries.reserveCapacity(options.events * options.sockets)
        cpuStart = env.serverCPU()
        runStart = clock.now()
        if options.rate <= 0 {
            for c in http { closedLoop(c) }
        } else {
            tick()
        }
    }

    private func closedLoop(_ c: HTTPBenchClient) {
        guard issued < options.events else { return }
        issued += 1
        create(on: c, scheduled: clock.now()) { self.answeredOne(); self.closedLoop(c) }
    }

    /// Open loop: creation i is due at runStart + i/rate; latency counts from when it was due.
    private func tick() {
        let now = clock.now()
        let interval = 1e9 / options.rate
        while issued < options.events {
            let dueAt = runStart &+ UInt64(Double(issued) * interval)
            if dueAt > now { break }
            due.append(dueAt)
            issued += 1
        }
        dispatchDue()
        if issued < options.events { env.loop.scheduleTask(in: 1_000_000) { self.tick() } }
    }

    private func dispatchDue() {
        while !due.isEmpty, let free = http.first(where: { !$0.busy }) {
            let at = due.removeFirst()
            create(on: free, scheduled: at) { self.answeredOne(); self.dispatchDue() }
        }
    }

    private func answeredOne() {
        answered += 1
        lastAnswer = clock.now()
        if answered == options.events { waitForDeliveries(deadline: clock.now() &+ 5_000_000_000) }
    }

    private func waitForDeliveries(deadline: UInt64) {
        let expected = sendTimes.count * options.sockets
        if deliveries.count >= expected || clock.now() >= deadline {
            report()
            return
        }
        env.loop.scheduleTask(in: 5_000_000) { self.waitForDeliveries(deadline: deadline) }
    }

    private func report() {
        measuring = false
        let cpuEnd = env.serverCPU()
        var latencies: [UInt64] = []
        latencies.reserveCapacity(deliveries.count)
        var lastDelivery: UInt64 = runStart
        var lastPerCreation: [UInt64: UInt64] = [:]
        for (h, t) in deliveries {
            guard let s = sendTimes[h] else { continue }
            latencies.append(t &- s)
            lastDelivery = max(lastDelivery, t)
            lastPerCreation[h] = max(lastPerCreation[h] ?? 0, t &- s)
        }
        // Time to all: from when a creation was due until its last socket had it.
        let toAll = Percentiles(Array(lastPerCreation.values))
        let expected = sendTimes.count * options.sockets
        let p = Percentiles(latencies)
        let seconds = Double(lastDelivery &- runStart) / 1e9
        let perSecond = Double(latencies.count) / seconds
        let rssPerSocket = options.sockets > 0 ? Double(rssAfter - rssBefore) * 1024 / Double(options.sockets) : 0
        let anonPerSocket = options.sockets > 0 ? Double(anonAfter - anonBefore) * 1024 / Double(options.sockets) : 0
        let rest = Percentiles(restLatencies)
        print("\(options.global ? "global" : "room") fan-out: \(options.sockets) sockets, \(sendTimes.count) creations"
              + (options.rate > 0 ? " at \(options.rate)/s" : " closed loop x\(options.concurrency)"))
        print("  creation→delivery: \(p.text)")
        print(String(format: "  deliveries/s %.0f, lost %d of %d, create errors %d", perSecond, expected - latencies.count, expected, errors))
        print("  REST create: \(rest.text)")
        print(String(format: "  server RSS %d KiB → %d KiB: %.1f KB per socket (anonymous part %d → %d KiB: %.2f KB)",
                     rssBefore, rssAfter, rssPerSocket / 1000, anonBefore, anonAfter, anonPerSocket / 1000))
        print("  time to all (creation due → its last delivery): \(toAll.text)")
        var cpu: [String: Double] = [:]
        if let a = cpuStart, let b = cpuEnd, !latencies.isEmpty {
            // Clock ticks are 10 ms (USER_HZ 100); the window is from the first creation to the last delivery.
            let tick = 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))   // µs per tick
            let user = Double(b.user - a.user) * tick, sys = Double(b.system - a.system) * tick
            let perDelivery = (user + sys) / Double(latencies.count)
            let frames = Double(latencies.count) * (options.global ? 1 : 2)  // room members also get the global event
            cpu = ["cpu_user_ms": user / 1000, "cpu_sys_ms": sys / 1000, "cpu_us_per_socket_event": perDelivery,
                   "cpu_us_per_frame": (user + sys) / frames, "cpu_sys_share": sys / max(1, user + sys)]
            print(String(format: "  server CPU during the run: user %.0f ms, sys %.0f ms (%.0f %% kernel); %.2f µs per socket per creation, %.2f µs per frame",
                         user / 1000, sys / 1000, 100 * sys / max(1, user + sys), perDelivery, (user + sys) / frames))
            var per: [(String, Double, Double)] = []
            for (k, v) in b.threads {
                let before = a.threads[k] ?? (0, 0)
                let u = Double(v.0 - before.0) * tick / 1000, s = Double(v.1 - before.1) * tick / 1000
                if u + s > 0 { per.append((k, u, s)) }
            }
            for (k, u, s) in per.sorted(by: { $0.1 + $0.2 > $1.1 + $1.2 }) {
                print(String(format: "    thread %@: user %.0f ms, sys %.0f ms", k, u, s))
            }
        }
        fleet.dropAll()
        var result: [String: Double] = ["to_all_p50_ms": toAll.p50, "to_all_p90_ms": toAll.p90, "to_all_max_ms": toAll.max]
        result.merge(cpu) { a, _ in a }
        result.merge(["p50_ms": p.p50, "p99_ms": p.p99, "max_ms": p.max, "deliveries_per_s": perSecond,
                                        "lost": Double(expected - latencies.count), "rss_kb_per_socket": rssPerSocket / 1000, "rss_anon_kb_per_socket": anonPerSocket / 1000,
                                        "rest_p99_ms": rest.p99, "errors": Double(errors + fleet.failures)]) { a, _ in a }
        let final = result
        env.loop.scheduleTask(in: 200_000_000) { self.completion.finish(final) }
    }
}

/// Room join of a room with 100 elements: `room:join` → `elements:batch` latency.
// @unchecked Sendable: loop-confined.
final class JoinScenario: @unchecked Sendable {
    let env: BenchEnv
    let sockets: Int
    let joins: Int
    let completion = Completion()
    private let clock = SystemClock()
    private var fleet: SocketFleet!
    private var started: [UInt64] = []
    private var batchLatencies: [UInt64] = []
    private var ackLatencies: [UInt64] = []
    private var issued = 0
    private var finished = 0
    private let prefix = Array("42[\"elements:batch\",".utf8)
    private var measuring = false
    private var batchBytes = 0

    init(env: BenchEnv, sockets: Int, joins: Int) {
        self.env = env
        self.sockets = sockets
        self.joins = joins
    }

    func run() -> [String: Double] {
        env.loop.execute { self.start() }
        return completion.wait()
    }

    private func start() {
        fleet = SocketFleet(env: env, count: sockets, joinRoom: nil, tokens: env.tokens)
        started = Array(repeating: 0, count: sockets)
        fleet.onReady = { [unowned self] in
            for c in self.fleet.clients {
                c.onAck = { [unowned self] c, _, _ in self.ackLatencies.append(self.clock.now() &- self.started[c.index]); self.next(c) }
            }
            self.measuring = true
            for c in self.fleet.clients { self.join(c) }
        }
        fleet.onEvent = { [unowned self] c, m in
            guard self.measuring, Bytes.hasPrefix(m, self.prefix) else { return }
            self.batchBytes = m.count
            self.batchLatencies.append(self.clock.now() &- self.started[c.index])
        }
        fleet.connectAll(since: clock.now())
    }

    private func join(_ c: SocketIOBenchClient) {
        guard issued < joins else { return }
        issued += 1
        started[c.index] = clock.now()
        c.emitWithAck("[\"room:join\",{\"roomId\":\"\(env.one("join-room"))\"}]")
    }

    private func next(_ c: SocketIOBenchClient) {
        finished += 1
        if finished == joins {
            let p = Percentiles(batchLatencies)
            let a = Percentiles(ackLatencies)
            print("room:join (\(sockets) sockets, \(joins) joins, batch \(batchBytes) bytes)")
            print("  join→elements:batch: \(p.text)")
            print("  join→ack: \(a.text)")
            fleet.dropAll()
            let r: [String: Double] = ["p50_ms": p.p50, "p99_ms": p.p99, "max_ms": p.max, "ack_p99_ms": a.p99]
            env.loop.scheduleTask(in: 200_000_000) { self.completion.finish(r) }
            return
        }
        join(c)
    }
}

/// Reconnect storm: N sockets joined to a room are dropped at once and reconnect (and rejoin) at once.
// @unchecked Sendable: loop-confined.
final class ReconnectScenario: @unchecked Sendable {
    let env: BenchEnv
    let sockets: Int
    let completion = Completion()
    private let clock = SystemClock()
    private var fleet: SocketFleet!

    init(env: BenchEnv, sockets: Int) {
        self.env = env
        self.sockets = sockets
    }

    func run() -> [String: Double] {
        env.loop.execute { self.start() }
        return completion.wait()
    }

    private func start() {
        fleet = SocketFleet(env: env, count: sockets, joinRoom: env.one("fanout-room"), tokens: env.memberTokens, window: sockets)
        fleet.onReady = { [unowned self] in
            print("\(self.sockets) sockets joined; dropping them all")
            self.env.loop.scheduleTask(in: 500_000_000) { self.storm() }
        }
        fleet.connectAll(since: clock.now())
    }

    private func storm() {
        fleet.dropAll()
        let t0 = clock.now()
        fleet.onReady = { [unowned self] in
            let p = Percentiles(self.fleet.readyTimes)
            let total = Double(self.clock.now() &- t0) / 1e6
            print("reconnect storm: \(self.sockets) sockets dropped and reconnected (connect + auth + room:join ack), \(self.fleet.failures) failed")
            print("  per socket: \(p.text)")
            print(String(format: "  all back in %.1f ms", total))
            self.fleet.dropAll()
            let r: [String: Double] = ["p50_ms": p.p50, "p99_ms": p.p99, "max_ms": p.max, "all_ms": total, "failed": Double(self.fleet.failures)]
            self.env.loop.scheduleTask(in: 200_000_000) { self.completion.finish(r) }
        }
        fleet.connectAll(since: t0)
    }
}
