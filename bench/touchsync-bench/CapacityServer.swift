import Foundation
import TSSockets

/// The server process of a capacity run: started by the tool (`--server-bin`), pinned with
/// taskset(1), or one already running (`--url`, `--server-pid`); and what /proc says about it.
final class CapacityServer: @unchecked Sendable {
    let host: String
    let port: Int
    private(set) var pid: Int32?
    private var process: Process?
    private let launch: Launch?

    /// How the tool starts the server itself.
    struct Launch {
        let binary: String
        let dataDirectory: String
        /// PostgreSQL instead of a fresh SQLite file in `dataDirectory`.
        let databaseURL: String?
        let synchronous: String
        let cpus: String?
        /// Extra `KEY=VALUE` environment for the measured server (`--server-env`).
        let environment: [String]
        let maxConnections: Int
    }

    /// A server the tool starts on a free loopback port.
    init(launch: Launch) throws {
        self.launch = launch
        host = "127.0.0.1"
        port = try Self.freePort()
    }

    /// A server someone else runs.
    init(url: String, pid: Int?) throws {
        let e = try BenchEnv.endpoint(url)
        host = e.host
        port = e.port
        self.pid = pid.map { Int32($0) }
        launch = nil
    }

    var startedByTool: Bool { launch != nil }
    var databasePath: String? { launch.map { "\($0.dataDirectory)/capacity.sqlite" } }

    /// Starts the server. `seeding`: test mode (for `/api/test/fixtures`) at `synchronous=NORMAL`,
    /// on a fresh database; otherwise the measured configuration on the database seeded before.
    /// Both use one JWT secret, so the tokens the fixtures issued stay valid across the restart.
    func start(seeding: Bool, loop: EventLoop) throws {
        guard let launch else { return }
        if seeding, launch.databaseURL == nil, let path = databasePath {
            for suffix in ["", "-wal", "-shm", ".jwtsecret", ".lock", ".serve.lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        var env = ProcessInfo.processInfo.environment
        env["TOUCHSYNC_JWT_SECRET"] = "capacity-benchmark-secret-0123456789abcdef"
        env["TOUCHSYNC_DATABASE_SYNCHRONOUS"] = seeding ? "NORMAL" : launch.synchronous
        // Every simulated user connects from a handful of loopback addresses: the per-address caps
        // (meant for one phone per address) are lifted and the total cap sized to the run.
        env["TOUCHSYNC_SERVER_MAX_CONNECTIONS"] = String(launch.maxConnections)
        env["TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS"] = "0"
        env["TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS"] = "0"
        if !seeding {
            for kv in launch.environment {
                guard let eq = kv.firstIndex(of: "=") else { throw BenchError("--server-env wants KEY=VALUE: \(kv)") }
                env[String(kv[..<eq])] = String(kv[kv.index(after: eq)...])
            }
        }
        var args = ["serve", "--host", host, "--port", String(port), "--log-level", "warning"]
        if let url = launch.databaseURL { args += ["--database-url", url] } else { args += ["--database", databasePath!] }
        if seeding { args.append("--test-mode") }
        // Through taskset(1) where it exists: unpinned means every CPU, not the load side's CPUs,
        // which a child would otherwise inherit.
        let p = Process()
        let taskset = "/usr/bin/taskset"
        if FileManager.default.isExecutableFile(atPath: taskset) {
            p.executableURL = URL(fileURLWithPath: taskset)
            p.arguments = ["-c", launch.cpus ?? "0-\(sysconf(Int32(_SC_NPROCESSORS_ONLN)) - 1)", launch.binary] + args
        } else {
            guard launch.cpus == nil else { throw BenchError("--server-cpus needs taskset(1) (util-linux), not found at \(taskset)") }
            p.executableURL = URL(fileURLWithPath: launch.binary)
            p.arguments = args
        }
        p.environment = env
        let log = "\(launch.dataDirectory)/server\(seeding ? "-seed" : "").log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        process = p
        stopOnSignals()
        pid = p.processIdentifier  // taskset execs the server: same pid
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if !p.isRunning { throw BenchError("the server exited at start (status \(p.terminationStatus)); see \(log)") }
            if let (status, _) = try? LoopHTTP.request(loop: loop, host: host, port: port, "GET", "/health"), status == 200 { return }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw BenchError("the server did not answer /health within 120 s; see \(log)")
    }

    /// On SIGINT or SIGTERM the server the tool started stops too, then the tool exits.
    private func stopOnSignals() {
        guard signalSources.isEmpty else { return }
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                stop()
                exit(128 + sig)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    private var signalSources: [any DispatchSourceSignal] = []

    /// SIGTERM, then SIGKILL after 20 s.
    func stop() {
        guard let p = process else { return }
        if p.isRunning { p.terminate() }
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        process = nil
    }

    /// A port nobody listens on now (bound and released; the server binds it right after).
    static func freePort() throws -> Int {
        let s = try Socket.makeListener(host: "127.0.0.1", port: 0, backlog: 1)
        defer { s.close() }
        return try s.localPort()
    }
}

/// /proc readings of one process: CPU ticks (user + system) and resident memory.
enum ProcFS {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime + stime of the whole process, in clock ticks.
    static func cpuTicks(pid: Int32) -> Int? {
        BenchEnv.cpuTicks("/proc/\(pid)/stat").map { $0.user + $0.system }
    }

    /// utime + stime of each thread (keyed "comm/tid"): for a process whose work is one event
    /// loop, a whole-process figure would hide one saturated thread among idle ones.
    static func threadTicks(pid: Int32) -> [String: Int] {
        var out: [String: Int] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            if let t = BenchEnv.cpuTicks("/proc/\(pid)/task/\(tid)/stat") { out["\(t.comm)/\(tid)"] = t.user + t.system }
        }
        return out
    }

    /// utime + stime of `pid` and every process descended from it (PostgreSQL's postmaster and
    /// its backends), in clock ticks. A backend that exits takes its ticks with it, so this
    /// undercounts short-lived ones; a server's pooled connections keep theirs.
    static func treeTicks(pid: Int32) -> Int {
        var parent: [Int32: Int32] = [:], ticks: [Int32: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let p = Int32(name), let text = try? String(contentsOfFile: "/proc/\(p)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { continue }
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let pp = Int32(fields[1]), let u = Int(fields[11]), let s = Int(fields[12]) else { continue }
            parent[p] = pp
            ticks[p] = u + s
        }
        var total = 0
        for (p, t) in ticks {
            var q: Int32? = p
            while let x = q, x > 1 {
                if x == pid { total += t; break }
                q = parent[x]
            }
        }
        return total
    }

    /// A `/proc/PID/status` field in KiB (`VmRSS:`, `RssAnon:`), or nil.
    static func statusKiB(pid: Int32, field: String = "VmRSS:") -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
        return nil
    }

    /// The soft "Max open files" of a process (`/proc/PID/limits`), or nil.
    static func openFileLimit(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Max open files") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[3])
        }
        return nil
    }

    /// CPUs in a taskset list ("0", "1-3", "0,2").
    static func cpuCount(_ list: String) -> Int {
        list.split(separator: ",").reduce(0) { n, part in
            let ends = part.split(separator: "-").compactMap { Int($0) }
            return n + (ends.count == 2 ? ends[1] - ends[0] + 1 : 1)
        }
    }
}

/// Process set-up of the load side: its CPUs and its open-file limit.
enum LoadSide {
    /// Pins every thread of `pid` (`taskset -a -p -c`); returns a line saying why not, or nil.
    static func pin(pid: Int32, cpus: String) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        p.arguments = ["-a", "-p", "-c", cpus, String(pid)]
        p.standardOutput = FileHandle.nullDevice
        do { try p.run() } catch { return "cannot run taskset: \(error)" }
        p.waitUntilExit()
        return p.terminationStatus == 0 ? nil : "taskset -a -p -c \(cpus) \(pid) failed (status \(p.terminationStatus))"
    }

    /// Raises RLIMIT_NOFILE towards `needed` (the soft limit up to the hard one, the hard one too
    /// when privileged). Returns the limit now in force and, when short of `needed`, why.
    static func raiseOpenFiles(to needed: Int) -> (limit: Int, problem: String?) {
        var r = rlimit()
        getrlimit(resource(RLIMIT_NOFILE), &r)
        if Int(r.rlim_cur) >= needed { return (Int(r.rlim_cur), nil) }
        var want = r
        want.rlim_cur = rlim_t(needed)
        if want.rlim_max < want.rlim_cur { want.rlim_max = want.rlim_cur }
        if setrlimit(resource(RLIMIT_NOFILE), &want) == 0 { return (needed, nil) }
        let hardError = errno
        want = r
        want.rlim_cur = r.rlim_max
        _ = setrlimit(resource(RLIMIT_NOFILE), &want)
        getrlimit(resource(RLIMIT_NOFILE), &r)
        return (Int(r.rlim_cur), "open-file limit \(r.rlim_cur) < \(needed) needed: the hard limit \(r.rlim_max) cannot be raised "
                + "(errno \(hardError)); run as root or raise `ulimit -Hn`")
    }
}

/// RLIMIT_NOFILE as `getrlimit`/`setrlimit` take it, without a platform conditional: Darwin's
/// <sys/resource.h> makes it an Int32, glibc's a `__rlimit_resource` enumerator; the overload
/// that fits the imported type is chosen at compile time.
private func resource<T: BinaryInteger>(_ code: T) -> Int32 { Int32(code) }
private func resource<T: RawRepresentable>(_ code: T) -> Int32 where T.RawValue: BinaryInteger { Int32(code.rawValue) }

/// One HTTP request on a fresh connection, blocking the calling (non-loop) thread.
enum LoopHTTP {
    static func request(loop: EventLoop, host: String, port: Int, _ method: String, _ path: String, token: String? = nil,
                        body: String? = nil, headers: [String] = [], timeout: Double = 30) throws -> (Int, [UInt8]) {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        loop.execute {
            do {
                let c = try HTTPBenchClient.open(host: host, port: port, loop: loop, id: 9_000_000)
                c.request(method, path, token: token, body: body, headers: headers) { status, bytes in
                    result.value = (status, Array(bytes))
                    c.connection.close(.local("done"))
                    done.signal()
                }
            } catch {
                result.error = error
                done.signal()
            }
        }
        guard done.wait(timeout: .now() + timeout) == .success else { throw BenchError("\(method) \(path): no answer within \(Int(timeout)) s") }
        if let e = result.error { throw e }
        guard let v = result.value, v.0 != 0 else { throw BenchError("\(method) \(path): connection closed without an answer") }
        return v
    }

    // @unchecked Sendable: written on the loop before `signal()`, read after `wait()`.
    private final class ResultBox: @unchecked Sendable {
        var value: (Int, [UInt8])?
        var error: Error?
    }
}

/// `print`, flushed at once: a capacity run lasts minutes and is often read through a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}
