import Foundation

/// A throw-away `redis-server` owned by one test, on its own free port, that the test may kill
/// and start again on the same port (Redis down, then back). Separate from the shared
/// one `scripts/services.sh` starts (`TOUCHSYNC_TEST_REDIS_URL`), which no test may kill.
// @unchecked Sendable: a test drives one instance from one task at a time.
public final class RedisTestServer: @unchecked Sendable {
    public let port: Int
    public let executable: String
    private var process: Process?
    private let directory: URL

    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Why live Redis tests cannot run here, or nil: redis-server must be installed (scripts/test
    /// installs it under CI; `apt-get install -y redis-server` locally).
    public static var unavailableReason: String? {
        findExecutable() == nil ? "redis-server is not installed (apt-get install -y redis-server; scripts/test installs it under CI)" : nil
    }

    static func findExecutable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let candidate = "\(dir)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts one on a free port; throws when redis-server is missing or does not answer.
    /// More redis-server arguments, e.g. `["--requirepass", "secret"]`.
    public let extraArguments: [String]

    public init(port: Int? = nil, extraArguments: [String] = []) throws {
        self.extraArguments = extraArguments
        guard let exe = Self.findExecutable() else { throw TestServerError(Self.unavailableReason ?? "no redis-server") }
        executable = exe
        self.port = try port ?? Self.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts (again) on `port` and waits until it accepts connections.
    public func start() throws {
        guard process == nil else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path,
                       "--logfile", directory.appendingPathComponent("redis.log").path] + extraArguments
        try p.run()
        process = p
        if blockUntil(timeout: .seconds(5), { Self.accepts(port: port) }) { return }
        throw TestServerError("redis-server on port \(port) did not start (log: \(directory.path)/redis.log)")
    }

    /// SIGKILL, as a crash; waits until it is gone.
    public func kill() {
        guard let p = process else { return }
        process = nil
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    static func accepts(port: Int) -> Bool {
        guard let c = try? RawTCPClient(port: port, timeoutSeconds: 1) else { return false }
        c.write("PING\r\n")
        // +PONG, or -NOAUTH when a password is required: either way it answers.
        if case .bytes(let b) = c.read() { return b.first == UInt8(ascii: "+") || b.first == UInt8(ascii: "-") }
        return false
    }

    static func freePort() throws -> Int {
        let p = TestSockets.freeLoopbackPort()
        guard p > 0 else { throw TestServerError("no free port") }
        return p
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
