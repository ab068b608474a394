import ArgumentParser
import Foundation
import Logging
import TSApp
import TSSockets
import TSSync
import TSJSON

@main
struct TouchSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "touchsync",
        abstract: "TouchSync server: the REST API and Socket.IO realtime backend of the TouchSync iOS app.",
        version: "touchsync \(BuildInfo.version)",
        subcommands: [Serve.self, Migrate.self, Token.self, Exec.self, Export.self, Import.self, Backup.self, Restore.self, Version.self, BenchSeed.self, Cert.self],
        defaultSubcommand: Serve.self)
}

/// Options shared by every command that opens the database.
struct CommonOptions: ParsableArguments {
    @Option(help: "JSON config file (see config/touchsync.example.json).")
    var config: String?

    @Option(help: "SQLite database file, or :memory: (default ./data/touchsync.sqlite, database.path).")
    var database: String?

    @Option(help: "PostgreSQL instead of SQLite: postgres://user:pass@host:port/db (database.url, TOUCHSYNC_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default info, log.level).")
    var logLevel: String?

    @Option(help: "Log format: text or json (default text, log.format).")
    var logFormat: String?

    func load(extra: [String: JSONValue] = [:]) throws -> AppConfiguration {
        var overrides = extra
        if let database { overrides["database.path"] = .string(database) }
        if let databaseURL { overrides["database.url"] = .string(databaseURL) }
        if let logLevel { overrides["log.level"] = .string(logLevel) }
        if let logFormat { overrides["log.format"] = .string(logFormat) }
        let config = try AppConfiguration.load(configFile: config, environment: ProcessInfo.processInfo.environment, overrides: overrides)
        guard let level = Logger.Level(rawValue: config[.logLevel]) else {
            throw ValidationError("log.level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard let format = TouchSyncLogHandler.Format(rawValue: config[.logFormat]) else {
            throw ValidationError("log.format must be text or json")
        }
        TouchSyncLogHandler.bootstrap(level: level, format: format)
        if let unknown = Setting.unknownEnvironmentWarning(ProcessInfo.processInfo.environment) {
            Logger(label: "touchsync.config").warning("\(unknown)")
        }
        return config
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the server.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (default 127.0.0.1, server.host; 0.0.0.0 for every interface).")
    var host: String?

    // .unconditional: `--port -1` is a value to refuse with the range, not a missing one.
    @Option(parsing: .unconditional, help: "TCP port, 1 to 65535; 0 picks a free one (default 3000, server.port).")
    var port: Int?

    @Flag(help: "Seed demo users, rooms, elements, messages and posts when the database is empty, and print their tokens.")
    var demo = false

    @Flag(help: "Test-target mode: POST /api/test/reset, POST /api/test/fixtures, GET /api/test/events, POST and GET /api/test/faults, POST /api/test/limits (docs/test-mode.md), for this machine only unless testModeToken (TOUCHSYNC_TEST_MODE_TOKEN) is set. Refused with TOUCHSYNC_ENV=production.")
    var testMode = false

    @Flag(name: .customLong("no-inspector"), help: "Do not serve the live inspector at /inspector (setting inspector.enabled).")
    var noInspector = false

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain: serve HTTPS/WSS (setting tls.certificateFile; needs --tls-key).")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of --tls-cert (setting tls.privateKeyFile).")
    var tlsKey: String?

    // Redis: cross-node fan-out.
    @Option(name: .customLong("redis-url"), help: "redis://[[user]:password@]host[:port]: share events with the other nodes of a cluster over Redis (a stream by default, realtime.redis.transport; setting realtime.redisUrl, env TOUCHSYNC_REDIS_URL).")
    var redisUrl: String?

    func run() async throws {
        var extra: [String: JSONValue] = [:]
        if let host { extra["server.host"] = .string(host) }
        if let port { extra["server.port"] = .int(Int64(port)) }
        if demo { extra["demo"] = true }
        if testMode { extra["testMode"] = true }
        if noInspector { extra["inspector.enabled"] = false }
        if let tlsCert { extra["tls.certificateFile"] = .string(tlsCert) }
        if let tlsKey { extra["tls.privateKeyFile"] = .string(tlsKey) }
        if let redisUrl { extra["realtime.redisUrl"] = .string(redisUrl) }
        let config = try common.load(extra: extra)
        // The listening address first: a busy port should not cost a migration and a demo seed.
        do { _ = try ServerPort.check(config[.serverPort]) } catch { throw Fatal.fail("\(error)") }
        do { try PortCheck.ensureAvailable(host: config[.serverHost], port: config[.serverPort]) } catch {
            throw Fatal.fail("\(error)")
        }
        // SIGTERM/SIGINT: stop accepting, finish in-flight requests (bounded), close the database, exit 0.
        // Watched before anything starts: whoever waits for the "listening" line or the banner may
        // signal at once, and a signal during start-up shuts down as soon as the server is up.
        let (stop, stopper) = AsyncStream<Int32>.makeStream()
        let signals = await SignalWatch.install([SIGTERM, SIGINT]) { stopper.yield($0) }
        let server: TouchSyncServer
        do { server = try TouchSyncServer(configuration: config) } catch {
            FileHandle.standardError.write(Data("touchsync: \(error)\n".utf8))
            throw ExitCode.failure
        }
        let demoMode = config[.demo]
        if demoMode { try await DemoSeeder.seedIfEmpty(server.domain, users: server.demoUsers) }
        let host = config[.serverHost]
        let port: Int
        do { port = try server.start(handleSIGHUP: true) } catch let error as SocketError {
            // Taken between the check and now (another process raced us): the same advice.
            throw Fatal.fail(PortCheck.message(for: error, host: host, port: config[.serverPort]))
        }
        let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
        let base = "\(server.scheme)://\(shownHost):\(port)"
        print(await StartupBanner.text(base: base, databasePath: server.databasePath, server: server, demo: demoMode))
        fflush(nil)

        for await sig in stop {
            server.logger.info("received signal \(sig): shutting down")
            break
        }
        await server.shutdown()
        server.logger.info("shutdown complete")
        signals.cancel()
    }
}

/// A start-up failure: the message goes to standard error and the process exits 1.
enum Fatal {
    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("touchsync: \(message)\n".utf8))
        return ExitCode.failure
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let config = try common.load()
        do {
            let server = try TouchSyncServer(configuration: config, role: .tool)
            print(Self.summary(applied: server.appliedMigrations, database: server.databasePath))
            server.db.close()
        } catch { throw Fatal.fail("\(error)") }
    }

    /// `applied 5 migrations (0001…0005) to PATH`, or `database PATH is up to date` when none was pending.
    static func summary(applied: [String], database: String) -> String {
        guard let first = applied.first, let last = applied.last else { return "database \(database) is up to date" }
        let range = applied.count == 1 ? first : "\(first)…\(last)"
        return "applied \(applied.count) migration\(applied.count == 1 ? "" : "s") (\(range)) to \(database)"
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a bearer token for an existing user.")

    @OptionGroup var common: CommonOptions

    @Argument(help: "The user's username.")
    var username: String

    @Option(help: "Lifetime, e.g. 30d, 12h, 15m or 3600s.")
    var expires: String = "30d"

    func run() async throws {
        guard let lifetime = Self.parseDuration(expires) else { throw ValidationError("--expires must look like 30d, 12h, 15m or 3600s") }
        let config = try common.load(extra: ["log.level": "warning"])
        // A token is for a user of an existing database: a mistyped path must not create one first.
        let path = config[.databasePath]
        if (config[.databaseUrl] ?? "").isEmpty, path != ":memory:", !FileManager.default.fileExists(atPath: path) {
            throw Fatal.fail("no database at \(path) (check --database or database.path; `touchsync migrate` creates one)")
        }
        let server: TouchSyncServer
        do { server = try TouchSyncServer(configuration: config, role: .tool) } catch { throw Fatal.fail("\(error)") }
        defer { server.db.close() }
        guard let userId = try await server.domain.auth.userId(forUsername: username) else {
            throw Fatal.fail("no user named \(username) in \(server.databasePath)")
        }
        print(await server.domain.auth.issueToken(userId: userId, lifetimeSeconds: lifetime))
    }

    static func parseDuration(_ s: String) -> Int64? {
        guard let last = s.last else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = units[last], let n = Int64(s.dropLast()), n > 0 { return n * unit }
        if let n = Int64(s), n > 0 { return n }
        return nil
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the version.")
    func run() { print("touchsync \(BuildInfo.version)") }
}
