import Foundation
import TSSockets

/// One step's figures (milliseconds unless named otherwise).
struct CapacityStep: Sendable {
    var users = 0
    var seconds = 0.0
    var visibleToAll = Percentiles([])
    var visiblePerMember = Percentiles([])
    var join = Percentiles([])
    var reconnect = Percentiles([])
    var rest = Percentiles([])
    var restRoutes: [(String, Percentiles)] = []
    var acks: [(String, Percentiles)] = []
    var expectedDeliveries = 0
    var lost = 0
    var unacked = 0
    var errors: [(String, Int, String)] = []
    var errorCount: Int { errors.reduce(0) { $0 + $1.1 } }
    var framesPerSecond = 0.0
    /// Shares of one core over the window.
    var serverCPU: Double?
    var databaseCPU: Double?
    var loadCPU = 0.0
    var loadBusiestThread = 0.0
    var lag = Percentiles([])
    var serverRSSKiB: Int?
    /// Growth over the idle server per user: all resident pages (VmRSS, which counts the pages of
    /// the database file SQLite maps and has read) and the anonymous ones (RssAnon: heap, stacks).
    var rssPerUserKB: Double?
    var anonPerUserKB: Double?
    var load1 = 0.0
    /// Why the step failed a target, or why it is not a measurement of the server.
    var failures: [String] = []
    var invalid: [String] = []
    var passed: Bool { failures.isEmpty && invalid.isEmpty }
}

/// Runs the steps: ramp, warm-up, steady window, summary; then the verdict and the last line.
struct CapacityStepper {
    let command: Capacity
    let driver: CapacityDriver
    let server: CapacityServer
    /// VmRSS and RssAnon of the idle server (KiB), before any user connected.
    let baselineKiB: (rss: Int, anon: Int)?

    func run() throws {
        var results: [CapacityStep] = []
        var lastPass: CapacityStep?
        var firstFail: CapacityStep?
        var invalidAt: CapacityStep?
        var n = command.start
        var bisectsLeft = command.bisect
        while true {
            let r = try measure(users: n)
            results.append(r)
            if !r.invalid.isEmpty {
                invalidAt = r
                break
            }
            if r.passed {
                if lastPass == nil || r.users > lastPass!.users { lastPass = r }
            } else if firstFail == nil || r.users < firstFail!.users {
                firstFail = r
            }
            if let f = firstFail {
                let low = lastPass?.users ?? 0
                guard bisectsLeft > 0, f.users - low > 1 else { break }
                bisectsLeft -= 1
                n = (low + f.users) / 2
                if n == 0 { break }
            } else {
                guard n < command.max else { break }
                n = Swift.min(command.max, n + command.step)
            }
        }
        say(finalLine(lastPass: lastPass, firstFail: firstFail, invalidAt: invalidAt))
    }

    // MARK: one step

    private func measure(users n: Int) throws -> CapacityStep {
        let loop = driver.loop
        let warmup = try Capacity.duration(command.warmup), steady = try Capacity.duration(command.steady)
        let grace = try Capacity.duration(command.grace)
        say("== step: \(n) users")
        let rampStart = Date()
        loop.submitAndWait { driver.setActive(n) }
        let rampLimit = Swift.max(60.0, Double(n) / 20)
        var lastPrint = Date()
        while true {
            let ready = loop.submitAndWait { driver.ready }
            if ready >= n { break }
            if Date().timeIntervalSince(rampStart) > rampLimit {
                throw BenchError("only \(ready) of \(n) users connected and joined within \(Int(rampLimit)) s; see the server log in \(command.data)")
            }
            if Date().timeIntervalSince(lastPrint) > 5 {
                say("  \(ready) of \(n) users online")
                lastPrint = Date()
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        say(String(format: "  %d users online in %.1f s; warm-up %.0f s, then %.0f s measured", n, Date().timeIntervalSince(rampStart),
                     Double(warmup) / 1e9, Double(steady) / 1e9))
        Thread.sleep(forTimeInterval: Double(warmup) / 1e9)

        let me = getpid()
        let serverTicks0 = server.pid.flatMap { ProcFS.cpuTicks(pid: $0) }
        let databaseTicks0 = command.databasePid.map { ProcFS.treeTicks(pid: Int32($0)) }
        let loadTicks0 = ProcFS.cpuTicks(pid: me) ?? 0
        let threads0 = ProcFS.threadTicks(pid: me)
        let frames0 = loop.submitAndWait { driver.recorder.framesIn }
        let t0 = Date()
        loop.submitAndWait {
            driver.recorder.begin()
            let now = driver.clock.now()
            for u in driver.users { u.forgetSessions(before: now) }
        }
        Thread.sleep(forTimeInterval: Double(steady) / 1e9)
        loop.submitAndWait { driver.recorder.end() }
        let seconds = Date().timeIntervalSince(t0)
        let serverTicks1 = server.pid.flatMap { ProcFS.cpuTicks(pid: $0) }
        let databaseTicks1 = command.databasePid.map { ProcFS.treeTicks(pid: Int32($0)) }
        let loadTicks1 = ProcFS.cpuTicks(pid: me) ?? 0
        let threads1 = ProcFS.threadTicks(pid: me)
        let frames1 = loop.submitAndWait { driver.recorder.framesIn }
        let rss = server.pid.flatMap { ProcFS.statusKiB(pid: $0) }
        let anon = server.pid.flatMap { ProcFS.statusKiB(pid: $0, field: "RssAnon:") }
        Thread.sleep(forTimeInterval: Double(grace) / 1e9)

        var r = loop.submitAndWait { summary(users: n, grace: grace) }
        r.seconds = seconds
        r.framesPerSecond = Double(frames1 - frames0) / seconds
        let tick = ProcFS.ticksPerSecond
        if let a = serverTicks0, let b = serverTicks1 { r.serverCPU = Double(b - a) / tick / seconds }
        if let a = databaseTicks0, let b = databaseTicks1 { r.databaseCPU = Double(b - a) / tick / seconds }
        r.loadCPU = Double(loadTicks1 - loadTicks0) / tick / seconds
        r.loadBusiestThread = threads1.map { k, v in Double(v - (threads0[k] ?? 0)) / tick / seconds }.max() ?? 0
        r.serverRSSKiB = rss
        if let rss, let base = baselineKiB { r.rssPerUserKB = Double(rss - base.rss) * 1.024 / Double(n) }
        if let anon, let base = baselineKiB { r.anonPerUserKB = Double(anon - base.anon) * 1.024 / Double(n) }
        if let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) { r.load1 = Double(text.split(separator: " ")[0]) ?? 0 }
        judge(&r)
        report(r)
        return r
    }

    /// The window's figures (on the loop).
    private func summary(users n: Int, grace: UInt64) -> CapacityStep {
        let rec = driver.recorder
        var r = CapacityStep()
        r.users = n
        let v = rec.visibility(driver: driver, grace: grace)
        r.visibleToAll = Percentiles(v.toAll)
        r.visiblePerMember = Percentiles(v.perMember)
        r.expectedDeliveries = v.expected
        r.lost = v.lost
        r.unacked = v.unacked
        r.join = Percentiles(rec.samples[.join] ?? [])
        r.reconnect = Percentiles(rec.samples[.reconnect] ?? [])
        r.rest = Percentiles(rec.rest.values.flatMap { $0 })
        r.restRoutes = rec.rest.keys.sorted().map { ($0, Percentiles(rec.rest[$0]!)) }
        r.acks = rec.acks.keys.sorted().map { ($0, Percentiles(rec.acks[$0]!)) }
        r.errors = rec.errors.keys.sorted().map { ($0, rec.errors[$0]!, rec.errorExamples[$0] ?? "") }
        if v.lost > 0 { r.errors.append(("lost deliveries", v.lost, "a connected member never got element:created or element:created:global")) }
        if v.unacked > 0 { r.errors.append(("element:create unanswered", v.unacked, "no ack by the end of the grace time")) }
        r.lag = Percentiles(rec.lags)
        return r
    }

    private func judge(_ r: inout CapacityStep) {
        func over(_ name: String, _ p: Percentiles, _ limit: Double) {
            if p.count > 0, p.p99 > limit { r.failures.append(String(format: "%@ p99 %.1f ms > %g", name, p.p99, limit)) }
        }
        over("create→visible", r.visibleToAll, command.maxVisibleMs)
        over("join", r.join, command.maxJoinMs)
        over("reconnect", r.reconnect, command.maxReconnectMs)
        over("REST", r.rest, command.maxRestMs)
        if r.errorCount > 0 { r.failures.append("\(r.errorCount) errors") }
        if r.loadBusiestThread > command.maxLoadCpu {
            r.invalid.append(String(format: "the load side is saturated: its busiest thread used %.0f %% of a core (limit %.0f %%)",
                                    100 * r.loadBusiestThread, 100 * command.maxLoadCpu))
        }
        if r.lag.count > 0, r.lag.p99 > command.maxLagMs {
            r.invalid.append(String(format: "the load side's event loop lagged: p99 %.1f ms (limit %.0f ms), so its timestamps are late", r.lag.p99, command.maxLagMs))
        }
    }

    // MARK: output

    private func report(_ r: CapacityStep) {
        func line(_ name: String, _ p: Percentiles) -> String {
            p.count == 0 ? "  \(name): no samples" : "  \(name): \(p.text)"
        }
        say(String(format: "step %d users, %.0f s measured, load average %.2f", r.users, r.seconds, r.load1))
        say(line("create→visible to all members", r.visibleToAll))
        say(line("create→visible per member", r.visiblePerMember) + " (\(r.expectedDeliveries) member deliveries expected, \(r.lost) lost)")
        say(line("room:join→elements:batch (\(driver.seed.elementsPerRoom)-element rooms)", r.join))
        say(line("reconnect (handshake→room re-joined)", r.reconnect))
        say(line("REST (all)", r.rest))
        for (route, p) in r.restRoutes { say("  " + line("REST \(route)", p)) }
        for (event, p) in r.acks { say("  " + line("ack \(event)", p)) }
        say("  errors: \(r.errorCount)")
        for (kind, count, example) in r.errors { say("    \(kind): \(count) (e.g. \(example))") }
        let cpu = r.serverCPU.map { String(format: "%.1f %% of a core", 100 * $0) } ?? "unknown (no --server-pid)"
        let rss = r.serverRSSKiB.map { String(format: "RSS %.1f MB", Double($0) * 1.024 / 1000) } ?? "RSS unknown"
        let perUser = r.rssPerUserKB.map { String(format: ", %.1f KB per user over the idle server (anonymous: %.1f KB)", $0, r.anonPerUserKB ?? .nan) } ?? ""
        let database = r.databaseCPU.map { String(format: "; PostgreSQL (--database-pid): CPU %.1f %% of a core", 100 * $0) }
            ?? (command.databaseUrl != nil ? " (PostgreSQL's own CPU not counted: --database-pid)" : "")
        say("  server: CPU \(cpu), \(rss)\(perUser)" + database)
        say(String(format: "  load side: CPU %.1f %% (busiest thread %.1f %% of a core), loop lag p99 %.2f ms max %.2f ms, %.0f events/s in",
                     100 * r.loadCPU, 100 * r.loadBusiestThread, r.lag.p99, r.lag.max, r.framesPerSecond))
        let verdict = !r.invalid.isEmpty ? "INVALID: " + r.invalid.joined(separator: "; ")
            : r.passed ? "PASS" : "FAIL: " + r.failures.joined(separator: "; ")
        say("  verdict: \(verdict)")
        var result: [String: Double] = [
            "users": Double(r.users), "visible_p99_ms": r.visibleToAll.p99, "visible_p50_ms": r.visibleToAll.p50, "visible_member_p99_ms": r.visiblePerMember.p99,
            "creates": Double(r.visibleToAll.count), "join_p99_ms": r.join.p99, "joins": Double(r.join.count), "reconnect_p99_ms": r.reconnect.p99,
            "reconnects": Double(r.reconnect.count), "rest_p99_ms": r.rest.p99, "rest_requests": Double(r.rest.count), "errors": Double(r.errorCount),
            "lost": Double(r.lost), "load_cpu": r.loadCPU, "load_busiest_thread_cpu": r.loadBusiestThread, "lag_p99_ms": r.lag.p99,
            "events_in_per_s": r.framesPerSecond, "passed": r.passed ? 1 : 0, "valid": r.invalid.isEmpty ? 1 : 0, "seconds": r.seconds, "load1": r.load1,
        ]
        if let c = r.serverCPU { result["server_cpu"] = c }
        if let c = r.databaseCPU { result["database_cpu"] = c }
        if let k = r.serverRSSKiB { result["server_rss_mb"] = Double(k) * 1.024 / 1000 }
        if let p = r.rssPerUserKB { result["rss_kb_per_user"] = p }
        if let p = r.anonPerUserKB { result["rss_anon_kb_per_user"] = p }
        printResult(result)
        fflush(nil)
    }

    private func finalLine(lastPass: CapacityStep?, firstFail: CapacityStep?, invalidAt: CapacityStep?) -> String {
        let storage = command.databaseUrl != nil ? "PostgreSQL" : "SQLite synchronous=\(command.synchronous)"
        var notes: [String] = []
        if let p = lastPass {
            notes.append(String(format: "p99 create→visible %.1f ms, join %.1f ms, reconnect %.1f ms, REST %.1f ms, 0 errors", p.visibleToAll.p99, p.join.p99,
                                p.reconnect.p99, p.rest.p99))
            if let c = p.serverCPU { notes.append(String(format: "server CPU %.0f %% of a core", 100 * c)) }
            if let c = p.databaseCPU { notes.append(String(format: "PostgreSQL CPU %.0f %% of a core", 100 * c)) }
            if let k = p.serverRSSKiB { notes.append(String(format: "RSS %.0f MB", Double(k) * 1.024 / 1000)) }
            if let u = p.rssPerUserKB { notes.append(String(format: "%.1f KB per user (anonymous %.1f KB)", u, p.anonPerUserKB ?? .nan)) }
            notes.append(String(format: "load side %.0f %% CPU", 100 * p.loadCPU))
        }
        notes.append(storage + ", server CPUs \(command.serverCpus ?? "unpinned"), load CPUs \(command.clientCpus ?? "unpinned")")
        if let i = invalidAt {
            notes.append("a lower bound: the step of \(i.users) users is no measurement: " + i.invalid.joined(separator: "; "))
        } else if let f = firstFail {
            notes.append("\(f.users) users failed: " + f.failures.joined(separator: "; "))
        } else {
            notes.append("every step passed up to --max \(command.max): at least this many")
        }
        return "capacity: \(lastPass?.users ?? 0) users (\(notes.joined(separator: "; ")))"
    }
}
