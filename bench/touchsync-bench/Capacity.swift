import ArgumentParser
import Foundation
import TSSockets

/// `touchsync-bench capacity`: how many app users one server holds (bench/README.md, "Capacity").
/// N simulated users run the app's mix; N steps up, each step measured over a steady window
/// after a warm-up; the largest N whose p99s and errors stay within the app's targets is the
/// capacity, printed last as `capacity: N users (…)`.
struct Capacity: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "N simulated app users stepped up: the largest N within the app's latency targets with 0 errors.",
        discussion: "See bench/README.md, \"Capacity\". The last line is `capacity: N users (…)`.")

    // The server
    @Option(help: "A touchsync binary: the tool starts it (fresh SQLite database in --data, or --database-url), seeds it in test mode, and restarts it for the measure.")
    var serverBin: String?
    @Option(help: "PostgreSQL for the server the tool starts (postgres://…); its tables are emptied by the seed.")
    var databaseUrl: String?
    @Option(help: "PostgreSQL's postmaster pid: its CPU and its backends' over each window is reported beside the server's.")
    var databasePid: Int?
    @Option(help: "database.synchronous of the measured SQLite server.")
    var synchronous = "FULL"
    @Option(help: "KEY=VALUE environment of the measured server (repeatable), e.g. TOUCHSYNC_LIMITS_ENABLED=false.")
    var serverEnv: [String] = []
    @Option(help: "A server already running instead (http://host:port); seed it with --seed-only while it runs in --test-mode, restart it without, then pass --seed-file.")
    var url: String?
    @Option(help: "Its process id (server CPU and RSS from /proc).")
    var serverPid: Int?
    @Option(help: "Directory for the database, the logs and seed.json.")
    var data = "bench/.data-capacity"
    @Option(help: "Use this seed (written by an earlier run or --seed-only) instead of seeding.")
    var seedFile: String?
    @Flag(help: "Seed (--max users, a test-mode server), write seed.json to --data, and stop.")
    var seedOnly = false
    @Option(help: "Elements per seeded room (what a room:join loads).")
    var roomElements = 100
    @Option(help: "Fixture loads (one cohort of 60 users each) in flight while seeding.")
    var seedConcurrency = 8

    // Pinning
    @Option(help: "CPUs of the server (taskset list, e.g. 0).")
    var serverCpus: String?
    @Option(help: "CPUs of this load generator (taskset list, e.g. 1).")
    var clientCpus: String?

    // Steps
    @Option(help: "Users of the first step.")
    var start = 1000
    @Option(help: "Users added per step.")
    var step = 1000
    @Option(help: "Most users (also what is seeded).")
    var max = 20000
    @Option(help: "Steps between the last passing and the first failing N, halving the gap each time.")
    var bisect = 0
    @Option(help: "Warm-up after a step's users are connected, before the steady window.")
    var warmup = "30s"
    @Option(help: "Steady window measured at each step.")
    var steady = "120s"
    @Option(help: "Time after the window for its last deliveries and answers.")
    var grace = "5s"

    // The mix
    @Option(help: "Heart toggle period per user.") var heartEvery = "10s"
    @Option(help: "Create-or-drag period per user (they alternate).") var writeEvery = "20s"
    @Option(help: "element:update messages per drag.") var dragUpdates = 5
    @Option(help: "Time between a drag's updates.") var dragInterval = "100ms"
    @Option(help: "GET /api/rooms/my-rooms period per user.") var myRoomsEvery = "60s"
    @Option(help: "interaction-state (20 posts) period per user.") var interactionsEvery = "30s"
    @Option(help: "Room switch (room:leave + room:join of the next room) period per user; 0 = never.") var switchEvery = "120s"
    @Option(help: "Background-and-back period per user; 0 = never.") var backgroundEvery = "300s"
    @Option(help: "Time in the background (± 50 %).") var backgroundPause = "5s"
    @Option(help: "Seed of the jitter.") var randomSeed: UInt64 = 35

    // Targets and validity
    @Option(help: "p99 creation → visible at every member, ms.") var maxVisibleMs = 50.0
    @Option(help: "p99 room:join → elements:batch of a 100-element room, ms.") var maxJoinMs = 500.0
    @Option(help: "p99 reconnect (handshake → room re-joined), ms.") var maxReconnectMs = 2000.0
    @Option(help: "p99 of every REST request, ms.") var maxRestMs = 50.0
    @Option(help: "A load-side thread busier than this share of a core invalidates the step.") var maxLoadCpu = 0.9
    @Option(help: "A load-side loop lag p99 above this (ms) invalidates the step.") var maxLagMs = 10.0

    // Connections
    @Option(help: "Users per loopback source address (127.0.0.1, .2, …): the ephemeral ports of one address run out near 28,000 connections.")
    var usersPerAddress = 4000
    @Option(help: "Handshakes in flight while a step's new users connect.")
    var connectWindow = 64

    func validate() throws {
        guard max > 0, seedOnly || (start > 0 && step > 0 && max >= start) else { throw ValidationError("want 0 < --start ≤ --max and --step > 0") }
        guard serverBin != nil || url != nil else { throw ValidationError("give --server-bin (the tool starts the server) or --url (a running one)") }
        guard serverBin == nil || url == nil else { throw ValidationError("--server-bin and --url exclude each other") }
        guard dragUpdates >= 0, roomElements > 0, connectWindow > 0, usersPerAddress > 0, seedConcurrency > 0 else { throw ValidationError("counts must be positive") }
        for d in [warmup, steady, grace, heartEvery, writeEvery, dragInterval, myRoomsEvery, interactionsEvery, switchEvery, backgroundEvery, backgroundPause] {
            _ = try Self.duration(d)
        }
    }

    /// "120s", "2m", "100ms", "1.5s", "0" → nanoseconds.
    static func duration(_ text: String) throws -> UInt64 {
        let units: [(String, Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let v = Double(text.dropLast(suffix.count)), v >= 0 { return UInt64(v * scale) }
        }
        if text == "0" { return 0 }
        throw ValidationError("not a duration: \(text) (use ms, s, m or h, e.g. 120s)")
    }

    func mix() throws -> CapacityMix {
        var m = CapacityMix()
        m.heart = try Self.duration(heartEvery)
        m.write = try Self.duration(writeEvery)
        m.myRooms = try Self.duration(myRoomsEvery)
        m.interactionState = try Self.duration(interactionsEvery)
        m.roomSwitch = try Self.duration(switchEvery)
        m.background = try Self.duration(backgroundEvery)
        m.backgroundPause = try Self.duration(backgroundPause)
        m.dragUpdates = dragUpdates
        m.dragInterval = try Self.duration(dragInterval)
        return m
    }

    func run() throws {
        Socket.ignoreSIGPIPE()
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let seeded = CapacityLayout.cohorts(forUsers: max) * CapacityLayout.cohortSize
        // Per user: the websocket and the REST connection, and briefly the two polling ones.
        let (limit, limitProblem) = LoadSide.raiseOpenFiles(to: 3 * seeded + 1024)
        if let limitProblem { say("WARNING: \(limitProblem); about \(limit / 3) users fit") }
        let loop = try EventLoop(threadName: "cap-load")
        if let cpus = clientCpus, let problem = LoadSide.pin(pid: getpid(), cpus: cpus) { say("WARNING: load side not pinned: \(problem)") }

        let server: CapacityServer
        if let bin = serverBin {
            server = try CapacityServer(launch: .init(binary: bin, dataDirectory: data, databaseURL: databaseUrl, synchronous: synchronous,
                                                      cpus: serverCpus, environment: serverEnv, maxConnections: 3 * seeded + 1024))
        } else {
            server = try CapacityServer(url: url!, pid: serverPid)
            if let pid = server.pid {
                if let cpus = serverCpus, let problem = LoadSide.pin(pid: pid, cpus: cpus) { say("WARNING: server not pinned: \(problem)") }
                if let l = ProcFS.openFileLimit(pid: pid), l < 2 * seeded + 256 {
                    say("WARNING: the server's open-file limit is \(l): fewer than the \(2 * seeded + 256) descriptors \(seeded) users need")
                }
            }
        }
        defer { server.stop() }

        let seed: CapacitySeed
        if let file = seedFile {
            seed = try CapacitySeed.read(from: file)
            guard seed.users >= max else { throw BenchError("the seed file has \(seed.users) users; --max is \(max)") }
        } else {
            try server.start(seeding: true, loop: loop)
            if !server.startedByTool {
                say("NOTE: seeding the running server through /api/test/fixtures: it runs in test mode, where answers wait for their "
                      + "broadcasts and every event is logged; restart it without --test-mode and pass --seed-file for a capacity figure")
            }
            seed = try CapacitySeed.load(users: max, elements: roomElements, host: server.host, port: server.port, loop: loop,
                                         inFlight: seedConcurrency)
            try seed.save(to: "\(data)/seed.json")
            server.stop()
        }
        if seedOnly {
            say("seed written to \(data)/seed.json")
            return
        }
        try server.start(seeding: false, loop: loop)
        Thread.sleep(forTimeInterval: 1)
        let baseline = server.pid.map { (ProcFS.statusKiB(pid: $0) ?? 0, ProcFS.statusKiB(pid: $0, field: "RssAnon:") ?? 0) }

        let sourceCount = (max + usersPerAddress - 1) / usersPerAddress
        let sources = server.host.hasPrefix("127.") && sourceCount > 1 ? (1...sourceCount).map { "127.0.0.\($0)" } : nil
        let driver = CapacityDriver(loop: loop, host: server.host, port: server.port, seed: seed, mix: try mix(), sources: sources,
                                    usersPerSource: usersPerAddress, connectWindow: connectWindow, randomSeed: randomSeed)
        loop.execute { driver.startLagTicker() }
        say("capacity: server \(server.host):\(server.port) pid \(server.pid.map(String.init) ?? "unknown"), "
              + (databaseUrl != nil ? "PostgreSQL" : "SQLite synchronous=\(synchronous)")
              + ", server CPUs \(serverCpus ?? "any"), load CPUs \(clientCpus ?? "any"), open-file limit \(limit)"
              + (sources.map { ", \($0.count) source addresses" } ?? ""))
        let stepper = CapacityStepper(command: self, driver: driver, server: server, baselineKiB: baseline)
        try stepper.run()
    }
}
