import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TSApp
import TSJSON

/// `touchsync exec [--demo | --fixtures FILE] [--port 0] -- COMMAND ARGS…` (docs/exec.md): what
/// `firebase emulators:exec` does for CI. Starts the server in test mode on an in-memory
/// database, waits until `/health` answers, exports its URL (and the fixtures' tokens and ids),
/// runs the command with inherited stdio, forwards SIGINT/SIGTERM to it, stops the server and
/// exits with the command's status (128 + N when a signal N killed it).
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command against a fresh test-mode server, then stop it and exit with the command's status.",
        discussion: """
            The command gets TOUCHSYNC_URL and, with --fixtures or --demo, TOUCHSYNC_FIXTURES_FILE (a JSON file of every \
            user's id and token and the ids of what was created) and TOUCHSYNC_TOKEN_<REF>, TOUCHSYNC_USER_ID_<REF>, \
            TOUCHSYNC_ROOM_<REF>, TOUCHSYNC_ELEMENT_<REF>, TOUCHSYNC_MESSAGE_<REF>, TOUCHSYNC_POST_<REF>. Each is also \
            exported with a TEST_RUNNER_ prefix, which xcodebuild passes on to the test process. \
            Exit status: the command's; 128+N if signal N killed it; 127 if it was not found; 125 if the server could \
            not be started or the fixtures not loaded. See docs/exec.md.
            """)

    /// The status when exec itself fails before the command runs (as `docker run` does).
    static let setupFailure: Int32 = 125

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "TCP port (0, the default, picks a free one).")
    var port: Int = 0

    @Flag(help: "Seed the demo data and export the demo users' tokens.")
    var demo = false

    @Option(help: "A fixture document (docs/test-mode.md) to load before the command runs.")
    var fixtures: String?

    // Only what follows `--` is the command: before it, `--help` and the options are exec's own
    // (`touchsync exec --help` prints this help instead of running a command named `--help`).
    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    mutating func validate() throws {
        if command.first == "--" { command.removeFirst() }
        guard !command.isEmpty else { throw ValidationError("missing the command: touchsync exec [options] -- COMMAND ARGS…") }
        if demo && fixtures != nil { throw ValidationError("--demo and --fixtures are exclusive") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535") }
    }

    func run() async throws {
        var extra: [String: JSONValue] = ["server.host": .string(host), "server.port": .int(Int64(port)), "testMode": true]
        extra["database.path"] = .string(common.database ?? ":memory:")
        if common.logLevel == nil && ProcessInfo.processInfo.environment["TOUCHSYNC_LOG_LEVEL"] == nil { extra["log.level"] = "warning" }
        if demo { extra["demo"] = true }

        // Read the fixtures before starting anything: a typo fails fast.
        var fixtureBody: Data?
        if let fixtures {
            guard let d = FileManager.default.contents(atPath: fixtures) else { throw Self.fail("cannot read fixtures file \(fixtures)") }
            fixtureBody = d
        }

        // An in-memory run needs no stored JWT secret: a random one for this process, without the warning.
        let probe = try AppConfiguration.load(configFile: common.config, environment: ProcessInfo.processInfo.environment, overrides: extra)
        if probe[.authJwtSecret] == nil && probe[.databasePath] == ":memory:" {
            var g = SystemRandomNumberGenerator()
            extra["auth.jwtSecret"] = .string((0..<4).map { _ in String(g.next() as UInt64, radix: 16) }.joined())
        }
        let config = try common.load(extra: extra)
        let server: TouchSyncServer
        let base: String
        do {
            server = try TouchSyncServer(configuration: config)
            let bound = try server.start()
            base = "\(server.scheme)://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(bound)"  // tls: https with tls.* set
        } catch { throw Self.fail("the server did not start: \(error)") }

        var env = ProcessInfo.processInfo.environment
        var exported: [String: String] = ["TOUCHSYNC_URL": base, "TOUCHSYNC_PORT": String(server.port)]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("touchsync-exec-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let status: Int32
        do {
            let health = try await Self.request(base + "/health")
            guard health.status == 200 else { throw Self.fail("GET /health answered \(health.status)") }
            var data: JSONValue?
            if let fixtureBody {
                let r = try await Self.request(base + "/api/test/fixtures", body: fixtureBody)
                guard r.status == 201 else {
                    throw Self.fail("loading \(fixtures ?? "") failed (\(r.status)): \(String(decoding: r.body, as: UTF8.self))")
                }
                data = try JSONValue.parse([UInt8](r.body))["data"]
            } else if demo {
                try await DemoSeeder.seedIfEmpty(server.domain, users: server.demoUsers)
                data = try await Self.demoUsers(server)
            }
            if let data {
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
                let file = scratch.appendingPathComponent("fixtures.json")
                var doc = data.objectValue ?? [:]
                doc["url"] = .string(base)
                try Data(JSONValue.object(doc).serialized()).write(to: file)
                exported["TOUCHSYNC_FIXTURES_FILE"] = file.path
                exported.merge(Self.variables(for: data)) { a, _ in a }
            }
            for (k, v) in exported {
                env[k] = v
                env["TEST_RUNNER_" + k] = v
            }
            FileHandle.standardError.write(Data("touchsync exec: test-mode server on \(base) (\(config[.databasePath])); running \(command.joined(separator: " "))\n".utf8))
            status = await ChildProcess.run(command, environment: env)
        } catch {
            await server.shutdown()
            if let e = error as? ExitCode { throw e }
            throw Self.fail("\(error)")
        }
        await server.shutdown()
        throw ExitCode(status)
    }

    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("touchsync exec: \(message)\n".utf8))
        return ExitCode(setupFailure)
    }

    /// The demo users as the fixtures answer shows users: `{"users": {"alice": {id, username, token}}}`.
    static func demoUsers(_ server: TouchSyncServer) async throws -> JSONValue {
        var users: JSONObject = [:]
        for u in server.demoUsers {
            guard let id = try await server.domain.auth.userId(forUsername: u.username) else { continue }
            users[u.username] = .object(["id": .string(id), "username": .string(u.username),
                                         "token": .string(await server.domain.auth.issueToken(userId: id))])
        }
        return .object(["users": .object(users)])
    }

    /// TOUCHSYNC_TOKEN_<REF> / TOUCHSYNC_USER_ID_<REF> per user and TOUCHSYNC_<KIND>_<REF> per created object.
    static func variables(for data: JSONValue) -> [String: String] {
        var out: [String: String] = [:]
        for (ref, user) in data["users"]?.objectValue?.pairs ?? [] {
            if let t = user["token"]?.stringValue { out["TOUCHSYNC_TOKEN_" + envName(ref)] = t }
            if let id = user["id"]?.stringValue { out["TOUCHSYNC_USER_ID_" + envName(ref)] = id }
        }
        for (key, kind) in [("rooms", "ROOM"), ("elements", "ELEMENT"), ("messages", "MESSAGE"), ("posts", "POST")] {
            for (ref, id) in data[key]?.objectValue?.pairs ?? [] {
                if let id = id.stringValue { out["TOUCHSYNC_\(kind)_" + envName(ref)] = id }
            }
        }
        return out
    }

    /// `my-ref.1` → `MY_REF_1`: upper case, anything but A-Z and 0-9 becomes `_`.
    static func envName(_ ref: String) -> String {
        String(ref.uppercased().unicodeScalars.map { ("A"..."Z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_" })
    }

    static func request(_ url: String, body: Data? = nil) async throws -> (status: Int, body: Data) {
        guard let u = URL(string: url) else { throw fail("bad URL \(url)") }
        var r = URLRequest(url: u)
        r.timeoutInterval = 30
        if let body {
            r.httpMethod = "POST"
            r.httpBody = body
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // The test routes' anti-CSRF header, or the token when the environment gives the server one.
        let token = ProcessInfo.processInfo.environment["TOUCHSYNC_TEST_MODE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        r.setValue(token ?? "1", forHTTPHeaderField: "X-TouchSync-Test")
        let (data, response) = try await URLSession.shared.data(for: r)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}
