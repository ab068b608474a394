import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import TSApp
import TSDomain
import TSJSON
import XCTest

/// A real TouchSync server on 127.0.0.1, port 0, with an in-memory database, for tests that
/// cross the wire. Cheap password hashing keeps registration fast.
final class LiveServer: @unchecked Sendable {
    // Invariant: set once in `start`, read afterwards.
    let server: TouchSyncServer
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    static let bootstrapLogging: Void = {
        TouchSyncLogHandler.bootstrap(level: ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical,
                                      format: .text)
    }()

    /// The PostgreSQL database of this server when the tests run on PostgreSQL (dropped by `stop`).
    let postgres: TestPostgresDatabase?

    /// The settings that name this server's database, for a second node on the same one (`sharingDatabaseOf`).
    let databaseSettings: [String: JSONValue]

    /// `sharingDatabaseOf`: another node of a cluster, on `other`'s database (which `other` owns and
    /// drops); for SQLite `other` must run on a file (`database.path`), not `:memory:`.
    init(overrides: [String: JSONValue] = [:], delivery: (any NotificationDelivery)? = nil, wallClock: (any WallClock)? = nil,
         sharingDatabaseOf other: LiveServer? = nil) throws {
        _ = Self.bootstrapLogging
        var o: [String: JSONValue] = ["server.port": 0, "database.path": ":memory:", "auth.passwordIterations": 1000,
                                      "auth.jwtSecret": "test-secret-test-secret-test-secret", "server.eventLoops": 2]
        for (k, v) in overrides { o[k] = v }
        // TOUCHSYNC_TEST_DATABASE=postgres runs every live server on a fresh
        // PostgreSQL database (scripts/test's PostgreSQL block); XCTSkip, visibly, without a server.
        if let other {
            for (k, v) in other.databaseSettings { o[k] = v }
            postgres = nil
        } else if TestPostgresDatabase.requested {
            let database = try TestPostgresDatabase()
            o["database.url"] = .string(database.url)
            postgres = database
        } else {
            postgres = nil
        }
        databaseSettings = o["database.url"].map { ["database.url": $0] } ?? ["database.path": o["database.path"] ?? ":memory:"]
        do {
            let config = try AppConfiguration.load(configFile: nil, environment: [:], overrides: o)
            server = try TouchSyncServer(configuration: config, environment: [:], wallClock: wallClock ?? SystemWallClock(), delivery: delivery)
            port = try server.start()
        } catch {
            postgres?.drop()
            throw error
        }
    }

    func stop() async {
        await server.shutdown()
        postgres?.drop()
    }

    deinit { postgres?.drop() }
}

/// A throw-away PostgreSQL database for one live server: `CREATE DATABASE ts_<random>` on the server
/// of `TOUCHSYNC_TEST_POSTGRES_URL` (scripts/services.sh), `DROP DATABASE … WITH (FORCE)` after.
/// Through `psql`, so the test target needs no PostgreSQL client library of its own.
final class TestPostgresDatabase: Sendable {
    let url: String
    let name: String
    let serverURL: String

    /// True when the environment asks for the PostgreSQL variant (`TOUCHSYNC_TEST_DATABASE=postgres`).
    static var requested: Bool { ProcessInfo.processInfo.environment["TOUCHSYNC_TEST_DATABASE"] == "postgres" }

    init() throws {
        let env = ProcessInfo.processInfo.environment
        guard let server = env["TOUCHSYNC_TEST_POSTGRES_URL"], !server.isEmpty else {
            throw XCTSkip("PostgreSQL variant skipped: TOUCHSYNC_TEST_POSTGRES_URL is not set (scripts/services.sh start DIR)"
                          + (env["TOUCHSYNC_TEST_SERVICES_SKIPPED"].map { ": \($0)" } ?? ""))
        }
        serverURL = server
        name = "ts_api_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        guard let slash = server.lastIndex(of: "/") else { throw XCTSkip("PostgreSQL variant skipped: cannot read \(server)") }
        url = String(server[..<slash]) + "/" + name
        try Self.psql(server, "CREATE DATABASE \(name)")
    }

    /// Not awaited: the database is never used again, and the drop's catalog and file work runs
    /// while the next test starts (the services' PostgreSQL goes at the end of the run anyway).
    func drop() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", serverURL, "-qc", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    static func psql(_ url: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-qc", sql]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch { throw XCTSkip("PostgreSQL variant skipped: psql cannot run (\(error))") }
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "TestPostgresDatabase", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "psql \(sql) failed: \(String(decoding: stderr, as: UTF8.self))"])
        }
    }
}

/// A URLSession client, as an iOS app would use, returning status, headers and body.
struct APIClient: Sendable {
    let base: String
    var token: String?

    struct Response: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data

        var json: JSONValue { (try? JSONValue.parse([UInt8](body))) ?? .null }

        func decode<T: Decodable>(_ type: T.Type, file: StaticString = #filePath, line: UInt = #line) throws -> T {
            do { return try APIClient.decoder.decode(T.self, from: body) } catch {
                XCTFail("cannot decode \(T.self) from \(String(decoding: body, as: UTF8.self)): \(error)", file: file, line: line)
                throw error
            }
        }

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()

    func send(_ method: String, _ path: String, json: JSONValue? = nil, rawBody: Data? = nil, headers: [String: String] = [:],
              token: String? = nil) async throws -> Response {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if let t = token ?? self.token { request.setValue("Bearer \(t)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.serialized())
        } else if let rawBody {
            request.httpBody = rawBody
        }
        // As TouchSyncTesting does: test-mode routes get the anti-CSRF header (TestModeAccess).
        if path.hasPrefix("/api/test/") { request.setValue("1", forHTTPHeaderField: "X-TouchSync-Test") }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var h: [String: String] = [:]
        for (k, v) in http.allHeaderFields { h["\(k)"] = "\(v)" }
        return Response(status: http.statusCode, headers: h, body: data)
    }

    func get(_ path: String, token: String? = nil) async throws -> Response { try await send("GET", path, token: token) }
    func post(_ path: String, _ json: JSONValue? = nil, token: String? = nil, headers: [String: String] = [:]) async throws -> Response {
        try await send("POST", path, json: json, headers: headers, token: token)
    }
    func patch(_ path: String, _ json: JSONValue, token: String? = nil) async throws -> Response { try await send("PATCH", path, json: json, token: token) }
    func delete(_ path: String, token: String? = nil) async throws -> Response { try await send("DELETE", path, token: token) }
}

/// A registered user and their token.
struct TestUser: Sendable {
    let id: String
    let username: String
    let token: String
}

extension APIClient {
    func register(_ username: String, firstName: String? = nil) async throws -> TestUser {
        let r = try await post("/api/auth/register", ["username": .string(username), "password": "password-123",
                                                       "firstName": .optional(firstName), "avatarUrl": .optional(nil as String?)])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let s = try r.decode(DataEnvelope<SessionDTO>.self).data
        return TestUser(id: s.user.id, username: username, token: s.token)
    }
}

extension APIClient {
    /// Test mode's fixtures (`POST /api/test/fixtures`): alice and bob, both members of room "r"
    /// (alice created it). Their tokens and the room's id.
    func aliceAndBobInOneRoom() async throws -> (alice: String, bob: String, room: String) {
        let data = try await post("/api/test/fixtures", [
            "users": [["username": "alice", "password": "alice-password"], ["username": "bob", "password": "bob-password"]],
            "rooms": [["ref": "r", "createdBy": "alice", "members": ["bob"]]],
        ]).json["data"] ?? .null
        return (try XCTUnwrap(data["users"]?["alice"]?["token"]?.stringValue), try XCTUnwrap(data["users"]?["bob"]?["token"]?.stringValue),
                try XCTUnwrap(data["rooms"]?["r"]?.stringValue))
    }
}

/// Base class of tests against one live server per test: `live` and an `api` client pointed at it.
class LiveServerTestCase: XCTestCase, @unchecked Sendable {
    // Invariant: XCTest runs setUp, the test and tearDown of one instance on one task, one after another.
    var live: LiveServer!
    var api: APIClient!

    /// Settings for this class's server (see `Setting.all`).
    var serverOverrides: [String: JSONValue] { [:] }

    override func setUp() async throws {
        live = try LiveServer(overrides: serverOverrides)
        api = APIClient(base: live.base)
    }

    override func tearDown() async throws { await live?.stop() }
}

extension LiveServerTestCase {
    /// Sends `write` until the first 429 (at most `max` tries): the successes before it and the
    /// refusal (nil when none came). Every answer before the refusal must be a success.
    func untilRefused(max: Int = 40, _ write: () async throws -> APIClient.Response) async throws -> (Int, APIClient.Response?) {
        var ok = 0
        for _ in 0..<max {
            let r = try await write()
            if r.status == 429 { return (ok, r) }
            XCTAssertTrue((200..<300).contains(r.status), String(decoding: r.body, as: UTF8.self))
            ok += 1
        }
        return (ok, nil)
    }
}
