import Foundation
import XCTest

/// A private PostgreSQL server for one test that must stop and restart the database (outage and
/// recovery tests), so the shared throw-away server of scripts/services.sh is never disturbed.
/// `initdb` into a temporary directory, `pg_ctl start` on a free loopback port, trust auth for
/// the superuser `touchsync`; as root the cluster belongs to `postgres` and runs through `runuser`
/// (PostgreSQL refuses to run as root). Skips visibly (`XCTSkip`) when the binaries are missing.
public final class ScratchPostgres: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init.
    public let port: Int
    /// `postgres://touchsync@127.0.0.1:PORT/touchsync`
    public let url: String
    private let bin: String
    private let dir: String
    private let asRoot: Bool

    public init() throws {
        guard let bin = Self.binDirectory() else {
            throw XCTSkip("PostgreSQL outage test skipped: no initdb/pg_ctl (apt-get install -y postgresql)")
        }
        self.bin = bin
        asRoot = getuid() == 0
        if asRoot && !Self.userExists("postgres") {
            throw XCTSkip("PostgreSQL outage test skipped: running as root without a `postgres` user to run the server as")
        }
        dir = NSTemporaryDirectory() + "ts-scratch-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        port = Self.freePort()
        url = "postgres://touchsync@127.0.0.1:\(port)/touchsync"
        if asRoot {
            try Self.run("/bin/chown", ["postgres", dir])
            try Self.run("/bin/chmod", ["755", dir])
        }
        try runPG("initdb", ["-D", dir + "/data", "-U", "touchsync", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        try start()
        try runPG("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "touchsync", "-d", "postgres", "-qc", "CREATE DATABASE touchsync"])
    }

    deinit { remove() }

    /// Starts (or restarts) the server on the same port.
    public func start() throws {
        try runPG("pg_ctl", ["-D", dir + "/data", "-l", dir + "/server.log", "-w", "-t", "60",
                             "-o", "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c fsync=off", "start"])
    }

    /// Stops the server at once (`-m immediate`: like a crash; every connection drops).
    public func stop() throws {
        try runPG("pg_ctl", ["-D", dir + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Freezes the server without closing anything (SIGSTOP to the postmaster and every backend):
    /// the kernel still accepts connections and acknowledges bytes, nothing answers — a hung or
    /// swapping server, which only a deadline on the client's side notices. Linux (/proc) only.
    public func freeze() throws { try signalServer(SIGSTOP) }

    /// Lets a frozen server run on (SIGCONT).
    public func thaw() throws { try signalServer(SIGCONT) }

    private func signalServer(_ signal: Int32) throws {
        guard let text = try? String(contentsOfFile: dir + "/data/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first, let postmaster = Int32(first) else {
            throw XCTSkip("cannot read the scratch server's postmaster.pid")
        }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // /proc/PID/stat: "pid (comm) state ppid ..."; comm may contain spaces, so split after ')'.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        guard pids.count > 1 else { throw XCTSkip("no /proc here to find the scratch server's backends") }
        for pid in pids { kill(pid, signal) }
    }

    /// Stops the server and deletes its directory (idempotent).
    public func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func runPG(_ tool: String, _ arguments: [String]) throws {
        if asRoot {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", bin + "/" + tool] + arguments)
        } else {
            try Self.run(bin + "/" + tool, arguments)
        }
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        // Errors go to a file, not a pipe: `pg_ctl start` leaves the server holding its stderr, so a
        // pipe would never reach end-of-file.
        let errorPath = NSTemporaryDirectory() + "ts-scratch-pg-err-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardError = errors
        try process.run()
        // waitpid, not `waitUntilExit`: Foundation's exit monitor was seen missing runuser's exit
        // after `pg_ctl start` (the child stayed a zombie), hanging the test.
        var status: Int32 = 0
        let reaped = waitpid(process.processIdentifier, &status, 0)
        let exitCode: Int32 = reaped == process.processIdentifier ? ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
                                                                   : { process.waitUntilExit(); return process.terminationStatus }()
        try? errors.close()
        guard exitCode == 0 else {
            let stderr = FileManager.default.contents(atPath: errorPath) ?? Data()
            throw NSError(domain: "ScratchPostgres", code: Int(exitCode), userInfo: [
                NSLocalizedDescriptionKey: "\(executable) \(arguments.joined(separator: " ")) failed: \(String(decoding: stderr, as: UTF8.self))"])
        }
    }

    static func binDirectory() -> String? {
        let fm = FileManager.default
        if let versions = try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql") {
            for v in versions.sorted(by: >) where fm.isExecutableFile(atPath: "/usr/lib/postgresql/\(v)/bin/initdb") {
                return "/usr/lib/postgresql/\(v)/bin"
            }
        }
        for d in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where fm.isExecutableFile(atPath: "\(d)/initdb") {
            return String(d)
        }
        return nil
    }

    static func userExists(_ name: String) -> Bool { getpwnam(name) != nil }

    /// A free loopback port, as scripts/services.sh finds one (python3 binds port 0); a random high
    /// port when python3 is missing (then `pg_ctl start` fails if it happens to be taken).
    static func freePort() -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        if (try? process.run()) != nil {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if let port = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) { return port }
        }
        return Int.random(in: 20_000..<60_000)
    }
}
